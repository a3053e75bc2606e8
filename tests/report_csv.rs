//! `--format csv` and `--output-csv`: one row per finding in the columns of
//! Huawei's `unsupported_api.csv`, read back by Python's own `csv` module.

mod common;

use std::process::Command;

/// The rows Python's `csv` module reads from `text`, as JSON lists of strings.
fn python_rows(text: &str) -> Vec<Vec<String>> {
    let dir = common::temp_dir("csv-read");
    let path = dir.join("report.csv");
    std::fs::write(&path, text).unwrap();
    let script =
        "import csv, json, sys\nwith open(sys.argv[1], newline='') as f:\n    print(json.dumps(list(csv.reader(f))))\n";
    let out = Command::new("python3").arg("-c").arg(script).arg(&path).output().expect("python3 runs");
    assert!(out.status.success(), "python3 failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn demo_report_reads_back_as_five_columns_one_row_per_finding() {
    let run = common::npu_mem(&["scan", "--format", "csv", "--fail-on", "never", "fixtures/demo"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows = python_rows(&run.stdout);
    assert_eq!(rows[0], ["File", "Start Line", "End Line", "OP", "Tips"]);
    let report = common::scan_json(&["fixtures/demo"]);
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(rows.len() - 1, findings.len(), "one row per finding, info and advice included");
    for (row, f) in rows[1..].iter().zip(findings) {
        assert_eq!(row.len(), 5, "{row:?}");
        assert_eq!(row[0], f["path"].as_str().unwrap());
        assert_eq!(row[1], f["line"].to_string());
        assert_eq!(row[2], f["end_line"].to_string());
        assert!(
            row[3].starts_with(&format!("{} {}", f["code"].as_str().unwrap(), f["name"].as_str().unwrap())),
            "{row:?}"
        );
        assert!(row[4].starts_with(f["message"].as_str().unwrap()), "{row:?}");
    }
    // Messages with quotes and commas survive the round trip.
    assert!(rows.iter().any(|r| r[4].contains('"') && r[4].contains(',')));
}

#[test]
fn output_csv_writes_the_same_rows_beside_another_format() {
    let dir = common::temp_dir("csv-file");
    let path = dir.join("unsupported_api.csv");
    let run = common::npu_mem(&[
        "scan",
        "--fail-on",
        "never",
        "--format",
        "concise",
        "--output-csv",
        path.to_str().unwrap(),
        "fixtures/demo",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written = std::fs::read_to_string(&path).unwrap();
    let direct = common::npu_mem(&["scan", "--format", "csv", "--fail-on", "never", "fixtures/demo"]).stdout;
    assert_eq!(written, direct);
    assert!(written.ends_with("\r\n") && !run.stdout.starts_with("File,"));
}
