//! Whether a shell script is written for the NPU, read from what it does:
//! it sources an Ascend environment script (`source test/env_npu.sh`,
//! `. /usr/local/Ascend/ascend-toolkit/set_env.sh`), sets the variables
//! the Ascend runtime and HCCL read (`ASCEND_*`, `HCCL_*`, `NPU_*`,
//! `RANK_SIZE`, `RANK_TABLE_FILE`) or points one at the Ascend install,
//! passes a program the NPU (`--device npu`, `--device=npu:0`, `--use_npu`)
//! or calls `npu-smi`. A script that only names the NPU (`echo "NPU
//! done"`, `RUN_ON_NPU=0`, `if [ $device = npu ]`) says nothing certain:
//! it is [`NpuSign::Mentions`].

use crate::parse::shell::Script;
use regex::Regex;
use std::sync::LazyLock;

/// What a shell script says about running on the NPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum NpuSign {
    /// Nothing.
    None,
    /// It names the NPU (outside comments) without doing any of the above.
    Mentions,
    /// It sets up or starts an NPU run.
    Does,
}

/// `npu`, `ascend`, `hccl` or `torch_npu` as a word of their own (`env_npu.sh`, `ASCEND_HOME`).
static NAMES_THE_NPU: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(^|[^a-z0-9])(npu|ascend|hccl|torch_npu)([^a-z0-9]|$)").expect("a valid pattern")
});

/// A file or directory of the Ascend software (`env_npu.sh`, `/usr/local/Ascend/...`).
static ASCEND_PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(^|[^a-z0-9])(npu|ascend)([^a-z0-9]|$)").expect("a valid pattern"));

/// The variables the Ascend runtime, torch_npu and HCCL read.
static NPU_VARIABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(ASCEND_\w+|HCCL_\w+|NPU_\w+|RANK_SIZE|RANK_TABLE_FILE)$").expect("a valid pattern")
});

/// An option that names the NPU (`--npu`, `--use_npu`, `--npus`, `--npu-id`).
static NPU_OPTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^--?([\w-]*[_-])?npus?([_-][\w-]*)?$").expect("a valid pattern"));

/// The NPU as an option's value (`npu`, `npu:0`).
static NPU_VALUE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)^npu(:\d+)?$").expect("a valid pattern"));

/// Commands that print or search text: what they are given names nothing they do.
const TEXT_COMMANDS: &[&str] = &["echo", "printf", "print", "logger", "grep", "sed", "awk", "cat", "tee", "test", "["];

/// What the script `text`, read as `script`, says about the NPU.
pub(crate) fn sign(text: &str, script: &Script) -> NpuSign {
    if does(script) {
        return NpuSign::Does;
    }
    // Comments blanked; a part the parser could not read keeps its mentions.
    match NAMES_THE_NPU.is_match(&script.comments.blank(text)) {
        true => NpuSign::Mentions,
        false => NpuSign::None,
    }
}

/// Whether `text` may say anything about the NPU (comments included):
/// only then is a script parsed for [`sign`]. Every sign [`sign`] reads
/// passes, also those without an NPU word (`RANK_SIZE=8`, `--use_npus`).
pub(crate) fn may_name_the_npu(text: &str) -> bool {
    static ANY_SIGN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)npu|ascend|hccl|RANK_SIZE|RANK_TABLE_FILE").expect("a valid pattern"));
    ANY_SIGN.is_match(text)
}

fn does(script: &Script) -> bool {
    let sets_npu_variable = script.mentions.iter().any(|m| {
        m.value
            .as_deref()
            .is_some_and(|v| NPU_VARIABLE.is_match(&m.name) || (v.contains('/') && ASCEND_PATH.is_match(v)))
    });
    sets_npu_variable || script.commands.iter().any(|c| command_does(&c.words()))
}

/// Whether a command (its words, the command word first) sets up or starts an NPU run.
fn command_does(words: &[String]) -> bool {
    let Some(name) = words.first().map(|w| w.rsplit('/').next().unwrap_or(w)) else { return false };
    let args = &words[1..];
    match name {
        "npu-smi" => true,
        "source" | "." => args.first().is_some_and(|a| ASCEND_PATH.is_match(a)),
        // `export ASCEND_DEVICE_ID` (its value set elsewhere).
        "export" => args.iter().any(|a| NPU_VARIABLE.is_match(a.split('=').next().unwrap_or(a))),
        _ if TEXT_COMMANDS.contains(&name) => false,
        _ => args.iter().enumerate().any(|(i, a)| {
            let option = a.starts_with('-') && !a.contains(char::is_whitespace);
            let (flag, value) = a.split_once('=').unwrap_or((a, ""));
            let after_option = i > 0 && args[i - 1].starts_with('-') && !args[i - 1].contains('=');
            (option && (NPU_OPTION.is_match(flag) || NPU_VALUE.is_match(value)))
                || (after_option && NPU_VALUE.is_match(a))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign_of(text: &str) -> NpuSign {
        sign(text, &crate::parse::shell::read(text))
    }

    /// Scripts that set up or start an NPU run, one sign each.
    const DOES: &[&str] = &[
        "source ${test_path_dir}/env_npu.sh\n",
        ". /usr/local/Ascend/ascend-toolkit/set_env.sh\n",
        "export ASCEND_DEVICE_ID=0\n",
        "export HCCL_WHITELIST_DISABLE=1\n",
        "RANK_SIZE=8\n",
        "export RANK_TABLE_FILE\n",
        "export LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:$LD_LIBRARY_PATH\n",
        "python3 train.py --device npu\n",
        "python3 train.py --device=npu:0\n",
        "DEVICE=npu\nnohup python3 train.py --device_type $DEVICE &\n",
        "torchrun main.py --use_npu\n",
        "torchrun main.py --use_npus\n",
        "npu-smi info\n",
        "if true; then (cd x && ASCEND_RT_VISIBLE_DEVICES=0 python3 t.py); fi\n",
    ];

    #[test]
    fn a_script_that_sets_up_or_starts_an_npu_run_does() {
        for text in DOES {
            assert_eq!(sign_of(text), NpuSign::Does, "{text}");
        }
    }

    #[test]
    fn every_script_with_a_sign_passes_the_prefilter() {
        // `RANK_SIZE=8` and `--use_npus` name no NPU word, yet are signs:
        // a prefilter on NPU words alone skipped such scripts unread.
        for text in DOES {
            assert!(may_name_the_npu(text), "{text}");
        }
        assert!(!may_name_the_npu("python3 train.py --gpus 8\n"));
    }

    #[test]
    fn a_script_that_only_names_the_npu_mentions_it() {
        // Issue 47, item 11 (a): each of these made a script "the NPU launcher".
        for text in [
            "RUN_ON_NPU=0\npython3 train.py\n",
            "echo \"training on NPU done\"\n",
            "echo --device npu\n",
            "if [ \"$device\" = \"npu\" ]; then echo x; fi\n",
            "python3 train.py --log 'npu run'\n",
        ] {
            assert_eq!(sign_of(text), NpuSign::Mentions, "{text}");
        }
        for text in
            ["# source env_npu.sh\npython train.py --gpus 8\n", "export CUDA_VISIBLE_DEVICES=0\n", "input_npus=1\n"]
        {
            assert_eq!(sign_of(text), NpuSign::None, "{text}");
        }
    }
}
