//! Which functions of a file run on every step of training or inference.
//!
//! A cost paid once (a warm-up input, optimizer state created on the first
//! step, an ONNX dummy input) does not matter; the same cost inside a model's
//! `forward` does. A function runs per step when it is a step by its name
//! (`forward`, Lightning's `training_step`, any `*_step`), or when the file
//! calls it by name (`f(...)`, `self.f(...)`, `cls.f(...)`) from a step loop
//! or from another function that runs per step. A step loop is a training
//! loop, or a `while` loop that does not retry after an error (decoding,
//! environment and generation loops run until done); a `for` loop that does
//! not train iterates over configs, layers or checkpoints as often as over
//! batches, so it does not count. Calls from other files are not followed:
//! the analysis is per file.

use crate::hash::{FastMap, FastSet};
use tree_sitter::Node;

/// A call of a name the file may define: `f(...)`, `self.f(...)` or `cls.f(...)`.
pub(crate) struct LocalCall<'t> {
    /// The call.
    pub call: Node<'t>,
    /// The called name (`f`).
    pub name: &'t str,
    /// The function the call is in, if any.
    pub function: Option<usize>,
    /// The innermost loop around the call within that function, if any.
    pub innermost_loop: Option<usize>,
}

/// Whether a function's name makes it a step: `forward`, or `*_step`
/// (`training_step`, `validation_step`, `train_step`, `optimizer_step`).
fn is_step_name(name: &str) -> bool {
    name == "forward" || (name.len() > "_step".len() && name.ends_with("_step"))
}

/// The ids of the functions that run per step (see the module docs), from
/// the node ids of the file's function definitions by name. `in_step_loop`
/// says whether a loop (by id), or one around it in the same function, is a
/// step loop.
pub(crate) fn per_step_functions(
    by_name: &FastMap<&str, Vec<usize>>,
    calls: &[LocalCall],
    in_step_loop: impl Fn(usize) -> bool,
) -> FastSet<usize> {
    let mut per_step: FastSet<usize> =
        by_name.iter().filter(|(name, _)| is_step_name(name)).flat_map(|(_, ids)| ids.iter().copied()).collect();
    // Calls of the file's own functions, each with whether it is in a step loop.
    let mut pending: Vec<(&LocalCall, bool)> = calls
        .iter()
        .filter(|c| by_name.contains_key(c.name))
        .map(|c| (c, c.innermost_loop.is_some_and(&in_step_loop)))
        .collect();
    // Every round settles at least one call or stops, so this ends.
    loop {
        let before = pending.len();
        pending.retain(|(call, in_loop)| {
            let runs = *in_loop || call.function.is_some_and(|f| per_step.contains(&f));
            if runs {
                per_step.extend(by_name[call.name].iter().copied());
            }
            !runs
        });
        if pending.len() == before {
            return per_step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_step_name, per_step_functions, LocalCall};
    use crate::hash::FastMap;

    #[test]
    fn steps_spread_through_calls_from_step_loops_and_step_functions() {
        // The call nodes are not read here: any node will do.
        let tree = crate::parse::parse_python("f()").expect("parses");
        let node = tree.root_node();
        let call = |name, function, innermost_loop| LocalCall { call: node, name, function, innermost_loop };
        let functions: FastMap<&str, Vec<usize>> =
            [("forward", 1), ("helper", 2), ("deeper", 3), ("setup", 4), ("collate", 5), ("train", 6)]
                .into_iter()
                .map(|(name, id)| (name, vec![id]))
                .collect();
        let calls = [
            call("deeper", Some(2), None),      // called by helper, before helper is known to step
            call("helper", Some(1), None),      // called by forward
            call("setup", Some(6), Some(10)),   // in a loop that is no step loop
            call("collate", Some(6), Some(11)), // in a step loop
            call("len", Some(1), None),         // not the file's own
        ];
        let found = per_step_functions(&functions, &calls, |id| id == 11);
        let mut ids: Vec<usize> = found.into_iter().collect();
        ids.sort_unstable();
        assert_eq!(ids, [1, 2, 3, 5]);
    }

    #[test]
    fn steps_are_named_forward_or_something_step() {
        for name in ["forward", "training_step", "train_step", "optimizer_step"] {
            assert!(is_step_name(name), "{name}");
        }
        for name in ["step", "_step", "forward_dummy", "stepper", "init"] {
            assert!(!is_step_name(name), "{name}");
        }
    }
}
