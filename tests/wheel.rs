//! The Python wheels (pyproject.toml, maturin with `bindings = "bin"`): the
//! x86_64 wheel is built from the source distribution, installed into a fresh
//! virtualenv and run on the demo; the aarch64 wheel is cross-built with zig.
//! Both binaries are checked as manylinux2014 promises: the right ELF machine
//! and no glibc symbol version newer than 2.17.

mod common;

use common::{new_venv, output_text, path_with, run_ok, venv_with};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `e_machine` of x86_64 and aarch64 ELF files.
const EM_X86_64: u16 = 62;
const EM_AARCH64: u16 = 183;

/// The newest glibc that manylinux2014 allows.
const MANYLINUX2014_GLIBC: [u32; 2] = [2, 17];

/// The limit on the size of the installed binary.
const MAX_BINARY_BYTES: u64 = 10_000_000;

/// Builds the manylinux2014 wheel for `target` with maturin and zig into `out`,
/// in a cargo target directory of its own (the test's is locked by cargo test),
/// and returns the wheel's path.
fn build_wheel(tools: &Path, target: &str, arch: &str, out: &Path, extra: &[&str]) -> PathBuf {
    let started = Instant::now();
    run_ok(
        Command::new(tools.join("maturin"))
            .args(["build", "--release", "--compatibility", "manylinux2014", "--zig", "--target", target, "--out"])
            .arg(out)
            .args(extra)
            .current_dir(ROOT)
            // maturin finds zig through the `ziglang` package of the Python on PATH.
            .env("PATH", path_with(tools))
            .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("wheel-cargo-target")),
    );
    let name = format!("npu_mem-{VERSION}-py3-none-manylinux2014_{arch}.manylinux_2_17_{arch}.whl");
    let wheel = out.join(&name);
    let built: Vec<_> = std::fs::read_dir(out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(wheel.is_file(), "expected {name} among {built:?}");
    let size = std::fs::metadata(&wheel).unwrap().len();
    eprintln!("{name}: {size} bytes, built in {:.0?}", started.elapsed());
    wheel
}

/// Unpacks `wheel` into `dir` with Python's zipfile and returns the `npu-mem`
/// binary in it, after checking that the wheel holds that binary and its
/// metadata and nothing else.
fn unpack(wheel: &Path, dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    run_ok(Command::new("python3").args(["-m", "zipfile", "-e"]).arg(wheel).arg(dir));
    let data = format!("npu_mem-{VERSION}.data");
    let top: BTreeSet<String> = entries(dir);
    let expected = BTreeSet::from([data.clone(), format!("npu_mem-{VERSION}.dist-info")]);
    assert_eq!(top, expected, "what {} holds", wheel.display());
    assert_eq!(entries(&dir.join(&data)), BTreeSet::from(["scripts".to_string()]));
    assert_eq!(entries(&dir.join(&data).join("scripts")), BTreeSet::from(["npu-mem".to_string()]));
    let binary = dir.join(data).join("scripts/npu-mem");
    let size = std::fs::metadata(&binary).unwrap().len();
    eprintln!("{}: binary of {size} bytes", wheel.file_name().unwrap().to_string_lossy());
    assert!(size <= MAX_BINARY_BYTES, "the binary has {size} bytes, more than {MAX_BINARY_BYTES}");
    binary
}

/// The names in `dir`.
fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// What the check reads of an ELF file.
struct Elf {
    /// `e_machine`: the instruction set.
    machine: u16,
    /// The symbol versions the file needs from shared libraries
    /// (`.gnu.version_r`), such as `GLIBC_2.17`.
    needed_versions: BTreeSet<String>,
}

fn bytes_at<const N: usize>(data: &[u8], at: u64) -> Result<[u8; N], String> {
    usize::try_from(at)
        .ok()
        .and_then(|at| data.get(at..at.checked_add(N)?))
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| format!("the file ends before offset {at} + {N}"))
}

fn u16_at(data: &[u8], at: u64) -> Result<u16, String> {
    bytes_at(data, at).map(u16::from_le_bytes)
}

fn u32_at(data: &[u8], at: u64) -> Result<u32, String> {
    bytes_at(data, at).map(u32::from_le_bytes)
}

fn u64_at(data: &[u8], at: u64) -> Result<u64, String> {
    bytes_at(data, at).map(u64::from_le_bytes)
}

/// The NUL-terminated string at `at`.
fn c_str_at(data: &[u8], at: u64) -> Result<String, String> {
    let rest = usize::try_from(at).ok().and_then(|at| data.get(at..)).ok_or("a name past the end")?;
    let end = rest.iter().position(|&b| b == 0).ok_or("a name without its NUL")?;
    Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// Reads the header and the version needs of a 64-bit little-endian ELF file
/// (the layouts are those of the System V ABI and the LSB's symbol versioning).
fn read_elf(data: &[u8]) -> Result<Elf, String> {
    const SHT_GNU_VERNEED: u32 = 0x6fff_fffe;
    if data.get(..4) != Some(b"\x7fELF".as_slice()) {
        return Err("not an ELF file".into());
    }
    if data.get(4..6) != Some([2u8, 1].as_slice()) {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let machine = u16_at(data, 18)?;
    let section_headers = u64_at(data, 0x28)?;
    let header_size = u64::from(u16_at(data, 0x3a)?);
    let sections = u64::from(u16_at(data, 0x3c)?);
    let section = |i: u64| section_headers + i * header_size;
    let mut needed_versions = BTreeSet::new();
    for i in 0..sections {
        if u32_at(data, section(i) + 4)? != SHT_GNU_VERNEED {
            continue;
        }
        let mut need = u64_at(data, section(i) + 24)?;
        let count = u32_at(data, section(i) + 44)?;
        let strings = u64_at(data, section(u64::from(u32_at(data, section(i) + 40)?)) + 24)?;
        // Each Verneed entry (a library) lists its Vernaux entries (versions).
        for _ in 0..count {
            let mut aux = need + u64::from(u32_at(data, need + 8)?);
            for _ in 0..u16_at(data, need + 2)? {
                needed_versions.insert(c_str_at(data, strings + u64::from(u32_at(data, aux + 8)?))?);
                aux += u64::from(u32_at(data, aux + 12)?);
            }
            need += u64::from(u32_at(data, need + 12)?);
        }
    }
    Ok(Elf { machine, needed_versions })
}

/// The version needs `readelf -V` lists, or None without binutils.
fn readelf_versions(binary: &Path) -> Option<BTreeSet<String>> {
    let out = Command::new("readelf").arg("-V").arg(binary).output().ok()?;
    assert!(out.status.success(), "readelf -V {}: {}", binary.display(), output_text(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let needs = text.split("Version needs section").nth(1).unwrap_or("");
    Some(needs.split("Name: ").skip(1).filter_map(|s| s.split_whitespace().next()).map(str::to_string).collect())
}

/// Checks the ELF machine and glibc versions of `binary`.
fn check_binary(binary: &Path, machine: u16) {
    let data = std::fs::read(binary).unwrap();
    let elf = read_elf(&data).unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    assert_eq!(elf.machine, machine, "e_machine of {}", binary.display());
    match readelf_versions(binary) {
        Some(listed) => assert_eq!(elf.needed_versions, listed, "readelf -V reads the same version needs"),
        None => eprintln!("no readelf: version needs not compared"),
    }
    let glibc: Vec<Vec<u32>> = elf
        .needed_versions
        .iter()
        .filter_map(|v| v.strip_prefix("GLIBC_"))
        .map(|v| v.split('.').map(|n| n.parse().unwrap_or_else(|_| panic!("glibc version {v}"))).collect())
        .collect();
    let newest = glibc.iter().max().unwrap_or_else(|| panic!("{} needs no glibc version", binary.display()));
    assert!(
        newest.as_slice() <= MANYLINUX2014_GLIBC.as_slice(),
        "{} needs GLIBC_{}, newer than manylinux2014 allows: {:?}",
        binary.display(),
        newest.iter().map(u32::to_string).collect::<Vec<_>>().join("."),
        elf.needed_versions
    );
}

/// The JSON report of `npu-mem` at `exe` on the demo, from the repository root.
fn demo_report(exe: &Path) -> serde_json::Value {
    let out = Command::new(exe)
        .args(["scan", "fixtures/demo", "--format", "json", "--fail-on", "never", "--no-cache"])
        .current_dir(ROOT)
        .output()
        .unwrap_or_else(|e| panic!("{} did not start: {e}", exe.display()));
    assert!(out.status.success(), "{} on the demo: {}", exe.display(), output_text(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", output_text(&out)))
}

/// The sdist carries what the build reads and nothing else (Cargo.toml's `include`).
fn check_sdist(out: &Path) {
    let sdist = out.join(format!("npu_mem-{VERSION}.tar.gz"));
    let listing = run_ok(Command::new("python3").args(["-m", "tarfile", "-l"]).arg(&sdist));
    let prefix = format!("npu_mem-{VERSION}/");
    let top: BTreeSet<String> = String::from_utf8_lossy(&listing.stdout)
        .lines()
        // Python's listing ends each name with a space.
        .map(|l| l.trim_end())
        .map(|l| l.strip_prefix(&prefix).unwrap_or(l).split('/').next().unwrap_or("").to_string())
        .collect();
    let expected =
        ["Cargo.lock", "Cargo.toml", "LICENSE", "PKG-INFO", "README.md", "build.rs", "pyproject.toml", "rules", "src"];
    assert_eq!(top, expected.iter().map(|s| s.to_string()).collect(), "what {} holds", sdist.display());
}

#[test]
#[ignore = "installs maturin and ziglang from PyPI and builds two release wheels; .ci/run runs it with `cargo test -- --ignored`"]
fn wheels_install_scan_like_the_crate_and_run_on_old_glibc() {
    let started = Instant::now();
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let tools = venv_with("wheel-tools-venv", &["maturin==1.16.0", "ziglang==0.17.1"]);
    let out = tmp.join("wheels");
    let _ = std::fs::remove_dir_all(&out);

    // x86_64, built from the source distribution, which shows the sdist is complete.
    let wheel = build_wheel(&tools, "x86_64-unknown-linux-gnu", "x86_64", &out, &["--sdist"]);
    check_sdist(&out);
    check_binary(&unpack(&wheel, &tmp.join("wheel-x86_64")), EM_X86_64);

    let venv = tmp.join("wheel-install-venv");
    let _ = std::fs::remove_dir_all(&venv);
    let bin = new_venv(&venv);
    let installing = Instant::now();
    run_ok(
        Command::new(bin.join("pip"))
            .args(["install", "--no-index", "--quiet", "--disable-pip-version-check"])
            .arg(&wheel),
    );
    eprintln!("pip install of the wheel into a fresh venv: {:.1?}", installing.elapsed());

    let installed = bin.join("npu-mem");
    let version = run_ok(Command::new(&installed).arg("--version"));
    assert_eq!(String::from_utf8_lossy(&version.stdout), format!("npu-mem {VERSION}\n"), "{}", output_text(&version));
    let report = demo_report(&installed);
    let findings = report["findings"].as_array().map_or(0, Vec::len);
    assert!(findings >= 10, "the demo has findings: {report}");
    assert_eq!(report, demo_report(Path::new(env!("CARGO_BIN_EXE_npu-mem"))), "the wheel scans like the crate");

    let wheel = build_wheel(&tools, "aarch64-unknown-linux-gnu", "aarch64", &out, &[]);
    check_binary(&unpack(&wheel, &tmp.join("wheel-aarch64")), EM_AARCH64);
    eprintln!("wheel test: {:.0?}", started.elapsed());
}
