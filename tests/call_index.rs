//! Calls a glob names through its first segment (`torch.cuda.*`,
//! `{torch.cuda,torch.npu}.*`) are found however the anchor resolves the
//! callee: by its own import, by another `if` arm's import of the same
//! name, or, with `subclasses`, by the base of a class of the file.

mod common;

use serde_json::Value;

/// A pack of one warning rule `CI001` whose message names the match.
fn pack(matcher: &str) -> String {
    format!(
        "[pack]\nname = \"call-index\"\n\n[[rule]]\ncode = \"CI001\"\nname = \"n\"\nsection = \"memory\"\n\
         severity = \"warning\"\nmessage = \"{{qualname}}\"\n\
         docs = {{ what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }}\n[rule.match]\n{matcher}\n"
    )
}

/// `(line, message)` of each CI001 finding on `code`.
fn findings(name: &str, matcher: &str, code: &str) -> Vec<(u64, String)> {
    let run = common::scan_with_pack(name, &pack(matcher), code, "CI");
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let found = report["findings"].as_array().unwrap().iter();
    found.map(|f| (f["line"].as_u64().unwrap(), f["message"].as_str().unwrap().to_string())).collect()
}

const ARMS: &str = "\
import os
if os.environ.get(\"FAST\"):
    import torch_npu as dev
else:
    import torch as dev
dev.cuda.synchronize()
";

const SUBCLASS: &str = "\
import torch


class Net(torch.nn.Module):
    pass


net = Net()
";

#[test]
fn other_arms_and_derived_classes_are_looked_up_by_their_root() {
    let arms = [(6, "torch.cuda.synchronize".to_string())];
    let derived = [(8, "torch.nn.Module".to_string())];
    for (name, matcher, code, expected) in [
        // Another arm's import of the callee.
        ("arms-braced", "call = \"{torch.cuda,torch.npu}.*\"", ARMS, &arms),
        ("arms-list", "call = [\"torch.cuda.*\", \"torch.npu.*\"]", ARMS, &arms),
        // A class of the file derived from a class the globs name.
        ("sub-braced", "call = \"{torch.nn,torch.optim}.*\"\nsubclasses = \"all\"", SUBCLASS, &derived),
        ("sub-list", "call = [\"torch.nn.*\", \"torch.optim.*\"]\nsubclasses = \"all\"", SUBCLASS, &derived),
    ] {
        assert_eq!(findings(name, matcher, code), expected, "{matcher}");
    }
}
