//! Messages that name what a rule read beside the reported node: the line of
//! the save that breaks under TX015, the dtype and operator of API019,
//! the import or the call of TX026.

mod common;

/// The messages of `code`'s findings in `file`, by line.
fn messages(file: &str, code: &str) -> Vec<(u64, String)> {
    let report = common::scan_json(&[file]);
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .map(|f| (f["line"].as_u64().unwrap(), f["message"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_script_and_the_save_of_its_result_are_one_finding_naming_the_save() {
    let found = messages("fixtures/rules/TX015.py", "TX015");
    let pair: Vec<&String> = found.iter().filter(|(line, _)| *line == 55).map(|(_, m)| m).collect();
    assert_eq!(pair.len(), 1, "{found:?}");
    assert!(pair[0].contains("`torch.jit.save(…)` on line 56, which needs the ScriptModule it returns, fails"));
    assert!(!found.iter().any(|(line, _)| *line == 56), "the save is not a finding of its own: {found:?}");
    let exported = messages("fixtures/rules/TX015-no-migration-export.py", "TX015");
    let texts: Vec<&str> = exported.iter().map(|(_, m)| m.as_str()).collect();
    assert!(texts[0].contains("`scripted.save(…)` on line 11"), "{texts:?}");
    assert!(texts[1].contains("the `torch.jit.freeze(…)` around it"), "{texts:?}");
    assert!(texts[2].contains("the `torch.jit.script(model).save(…)` around it"), "{texts:?}");
    // `torch.save` pickles a plain module as well: it is not what fails.
    assert!(!texts[3].contains("torch.save"), "{texts:?}");
    assert!(texts[3].contains("saving, freezing or optimising what it returns fails"), "{texts:?}");
}

#[test]
fn an_undocumented_dtype_names_the_dtype_and_the_operator_huawei_lists() {
    let found = messages("fixtures/rules/API019.py", "API019");
    let at = |line: u64| found.iter().find(|(l, _)| *l == line).map(|(_, m)| m.as_str()).unwrap_or_default();
    let lists = "which each of Huawei's operator lists for torch_npu 2.6, 2.7 and 2.8 leaves out of the dtypes of";
    assert!(at(17).starts_with(&format!("`torch.matmul(…)` computes in `torch.float64`, {lists} `torch.matmul`")));
    assert!(at(18).starts_with(&format!("`.matmul(…)` computes in `torch.float64`, {lists} `torch.Tensor.matmul`")));
    assert!(at(22).starts_with(&format!("`torch.matmul(…)` computes in `torch.complex64`, {lists}")), "{found:?}");
}

#[test]
fn a_cuda_extension_is_reported_at_its_import_and_at_each_call_through_it() {
    let found = messages("fixtures/rules/TX026-cuda-extension-import/required", "TX026");
    let starts: Vec<&str> = found.iter().map(|(_, m)| m.split(" a module").next().unwrap_or_default()).collect();
    for expected in [
        "`from detector import _C` imports",
        "`_C.nms(boxes, scores, threshold)` calls into a compiled extension,",
        "`_C.roi_pool_forward(features, rois, size)` calls into a compiled extension,",
    ] {
        assert!(starts.contains(&expected), "{expected}: {found:?}");
    }
    assert!(found.iter().any(|(_, m)| m.ends_with("this operator needs an NPU replacement (its import fails first).")));
}
