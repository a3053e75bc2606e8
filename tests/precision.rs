//! Precision beyond the fixtures' codes per line: what blocks automatic
//! migration (a finding at its rule's full severity; a downgraded one, such as
//! an import nothing reads, blocks nothing) and how many findings a line gets.

mod common;

use common::{npu_mem_in, temp_dir};
use serde_json::Value;

/// The findings of rule `code` in a scan of `dir`, as JSON.
fn findings(dir: &std::path::Path, code: &str) -> Vec<Value> {
    let run = npu_mem_in(dir, &["scan", ".", "--format", "json", "--select", code, "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    report["findings"].as_array().unwrap().clone()
}

/// (line, severity, blocker) of each finding of rule `code` in a scan of `dir`.
fn severities(dir: &std::path::Path, code: &str) -> Vec<(u64, String, bool)> {
    findings(dir, code)
        .iter()
        .map(|f| (f["line"].as_u64().unwrap(), f["severity"].as_str().unwrap().to_string(), f["blocker"] == true))
        .collect()
}

#[test]
fn an_unused_cuda_only_import_is_info_and_not_a_blocker() {
    let dir = temp_dir("blockers-unused-import");
    let source = "import torch\nimport triton\nimport cupy as cp\nfrom apex.parallel import DistributedDataParallel as DDP\n\nx = cp.zeros(3)\n";
    std::fs::write(dir.join("m.py"), source).unwrap();
    assert_eq!(
        severities(&dir, "TX010"),
        vec![(2, "info".to_string(), false), (3, "error".to_string(), true), (4, "info".to_string(), false)],
        "triton and DDP are never read; cupy is"
    );
    // The gate: only the used import fails it.
    let gate = npu_mem_in(&dir, &["scan", ".", "--select", "TX010", "--format", "concise"]);
    assert_eq!(gate.code, 1);
    std::fs::write(dir.join("m.py"), "import torch\nimport triton\n").unwrap();
    let passing = npu_mem_in(&dir, &["scan", ".", "--select", "TX010", "--format", "concise"]);
    assert_eq!(passing.code, 0, "{}", passing.stdout);
}

#[test]
fn two_host_reads_on_one_line_are_one_finding() {
    let dir = temp_dir("precision-once-per-line");
    let source = "import torch\n\ndef train(loader, model, opt):\n    for x in loader:\n        loss = model(x)\n        loss.backward()\n        opt.step()\n        print(loss.item(), x.sum().item())\n        total = loss.item()\n";
    std::fs::write(dir.join("t.py"), source).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--format", "json", "--select", "TX005", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let lines: Vec<u64> = report["findings"].as_array().unwrap().iter().map(|f| f["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, vec![8, 9]);
}

#[test]
fn cuda_only_library_imports_block_only_when_used_and_not_bitsandbytes() {
    let dir = temp_dir("precision-cuda-only-library");
    let source = "import torch\nfrom flash_attn import flash_attn_func\nimport xformers.ops\nimport bitsandbytes as bnb\n\ndef attend(q, k, v):\n    return flash_attn_func(q, k, v), bnb\n";
    std::fs::write(dir.join("m.py"), source).unwrap();
    assert_eq!(
        severities(&dir, "API014"),
        vec![(2, "error".to_string(), true), (3, "info".to_string(), false), (4, "info".to_string(), false)],
        "flash_attn is used; xformers.ops is never read; bitsandbytes has an Ascend backend for NF4"
    );
}

#[test]
fn turning_cudnn_tf32_off_names_the_npu_conv_hf32_default() {
    let dir = temp_dir("precision-hf32");
    let source = "import torch\ntorch.backends.cudnn.allow_tf32 = False\ntorch.backends.cudnn.allow_tf32 = True\n";
    std::fs::write(dir.join("m.py"), source).unwrap();
    let found = findings(&dir, "TX012");
    let messages: Vec<&str> = found.iter().map(|f| f["message"].as_str().unwrap()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("without `torch.npu.conv.allow_hf32 = False` too"), "{}", messages[0]);
    assert!(messages[1].contains("on unless set to False)") && !messages[1].contains("without"), "{}", messages[1]);
}

#[test]
fn a_sync_under_a_periodic_guard_is_info_and_says_it_is_not_every_iteration() {
    let dir = temp_dir("precision-periodic-sync");
    let source = "def train(loader, model, opt, log_interval):\n    for step, x in enumerate(loader):\n        loss = model(x)\n        loss.backward()\n        opt.step()\n        if step % log_interval == 0:\n            print(loss.item())\n        last = loss.item()\n";
    std::fs::write(dir.join("t.py"), source).unwrap();
    let found: Vec<(u64, String, String)> = findings(&dir, "TX005")
        .iter()
        .map(|f| {
            let field = |k: &str| f[k].as_str().unwrap().to_string();
            (f["line"].as_u64().unwrap(), field("severity"), field("message"))
        })
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!((found[0].0, found[0].1.as_str()), (7, "info"));
    assert!(
        found[0].2.ends_with("on the iterations its periodic `if` selects, not every iteration."),
        "{}",
        found[0].2
    );
    assert_eq!((found[1].0, found[1].1.as_str()), (8, "warning"));
    assert!(found[1].2.ends_with("forces a device synchronisation every iteration."), "{}", found[1].2);
}

#[test]
fn a_device_default_that_every_call_in_the_file_overrides_is_info() {
    let dir = temp_dir("callers-pass");
    let source = "\
import torch


def one_hot(x, n, on=1.0, device='cuda'):
    return torch.full((x.size(0), n), on, device=device)


def target(x, n, device='cuda'):
    a = one_hot(x, n, device=device)
    b = one_hot(x, n, 1.0, x.device)
    return a + b


def smooth(x, n, device='cuda'):
    return one_hot(x, n, device=device)


class Mixer:
    def mix(self, x, device='cuda'):
        return x.to(device)

    def run(self, x):
        return self.mix(x, x.device) + self.mix(x, **{'device': 'cpu'})


class Blender:
    def blend(self, x, device='cuda'):
        return x.to(device)

    def run(self, x, **opts):
        return self.blend(x, x.device) + self.blend(x, **opts)


y = target(torch.ones(2), 3, 'cpu')
z = smooth(torch.ones(2), 3)
";
    std::fs::write(dir.join("mixup.py"), source).unwrap();
    let got: Vec<(u64, String)> = severities(&dir, "TX002").into_iter().map(|(l, s, _)| (l, s)).collect();
    assert_eq!(
        got,
        vec![
            // every call passes it: by keyword, or fourth positionally
            (4, "info".to_string()),
            // passed positionally by the module-level call
            (8, "info".to_string()),
            // the call at the end leaves it out
            (14, "warning".to_string()),
            // a dictionary written out in the call passes it, as a keyword would
            (19, "info".to_string()),
            // `**opts` may or may not pass it
            (27, "warning".to_string()),
        ]
    );
}

#[test]
fn a_load_that_resumes_a_run_is_info_and_pretrained_weights_are_not() {
    let dir = temp_dir("resume-load");
    let source = "\
import torch


def main(args, model):
    if args.resume:
        model.load_state_dict(torch.load(args.resume))
    state = torch.load(args.resume_from)
    pretrained = torch.load(args.pretrained)
    return state, pretrained
";
    std::fs::write(dir.join("train.py"), source).unwrap();
    let got: Vec<(u64, String)> = severities(&dir, "TX014").into_iter().map(|(l, s, _)| (l, s)).collect();
    let expected = [(6, "info"), (7, "info"), (8, "warning")];
    assert_eq!(got, expected.map(|(l, s)| (l, s.to_string())));
}

#[test]
fn an_unpinned_loader_of_one_sample_batches_is_info_and_says_why() {
    let dir = temp_dir("one-sample-loader");
    let source = "\
from torch.utils.data import DataLoader


def loaders(train_ds, val_ds, sampler, collate, opt):
    train = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=4)
    val = DataLoader(val_ds, batch_size=1, shuffle=False)
    plain = DataLoader(val_ds)
    grouped = DataLoader(train_ds, num_workers=4, collate_fn=collate)
    batched = DataLoader(train_ds, batch_sampler=sampler)
    chosen = DataLoader(val_ds, batch_size=opt.test_batch_size)
    return train, val, plain, grouped, batched, chosen
";
    std::fs::write(dir.join("data.py"), source).unwrap();
    let found: Vec<(u64, String, bool)> = findings(&dir, "DL002")
        .iter()
        .map(|f| {
            let one_sample = f["message"].as_str().unwrap().contains("its batches hold one sample each");
            (f["line"].as_u64().unwrap(), f["severity"].as_str().unwrap().to_string(), one_sample)
        })
        .collect();
    let expected = [
        (5, "warning", false),
        // `batch_size=1` written out
        (6, "info", true),
        // DataLoader's default batch size is 1
        (7, "info", true),
        // a collate function or a batch sampler may group samples
        (8, "warning", false),
        (9, "warning", false),
        // a batch size from an option is unknown
        (10, "warning", false),
    ];
    assert_eq!(found, expected.map(|(l, s, o)| (l, s.to_string(), o)));
}

#[test]
fn a_comparison_in_the_branch_of_a_cuda_comparison_is_info_and_follows_it() {
    let dir = temp_dir("tx003-nested");
    let source = "\
def step(target, state):
    if target.type == \"cuda\":
        assert state.device.type == \"cuda\", \"state stays on cuda\"
    elif target.type != \"cuda\":
        assert state.device.type == \"cuda\"
";
    std::fs::write(dir.join("m.py"), source).unwrap();
    assert_eq!(
        severities(&dir, "TX003"),
        vec![
            (2, "error".to_string(), true),
            (3, "info".to_string(), false),
            (4, "error".to_string(), true),
            (5, "error".to_string(), true),
        ],
        "only the branch of an `==` test is a follow-on of it"
    );
}

#[test]
fn a_checkpoint_managers_own_load_is_info_and_a_load_without_its_save_is_not() {
    let dir = temp_dir("checkpoint-manager-load");
    let manager = "\
import torch


class CheckpointManager:
    def save_checkpoint(self, state, path):
        torch.save(state, path)

    def load_checkpoint(self, path):
        return torch.load(path)

    def load_pretrained(self, path):
        return torch.load(path)

    def export(self, path):
        return torch.load(path)

    def load_weights(self, path):
        return torch.load(path)
";
    let loader = "import torch\n\n\ndef load_checkpoint(path):\n    return torch.load(path)\n";
    std::fs::write(dir.join("manager.py"), manager).unwrap();
    std::fs::write(dir.join("loader.py"), loader).unwrap();
    let got: Vec<(String, u64, String)> = findings(&dir, "TX014")
        .iter()
        .map(|f| {
            let file = f["path"].as_str().unwrap().to_string();
            (file, f["line"].as_u64().unwrap(), f["severity"].as_str().unwrap().to_string())
        })
        .collect();
    let expected = [
        ("loader.py", 5, "warning"),
        ("manager.py", 9, "info"),
        ("manager.py", 12, "warning"),
        ("manager.py", 15, "warning"),
        ("manager.py", 18, "warning"),
    ];
    assert_eq!(got, expected.map(|(p, l, s)| (p.to_string(), l, s.to_string())));
}
