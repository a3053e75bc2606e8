//! Which encoding a file's bytes are in, and writing text back in it.
//!
//! Most files are UTF-8. Two others are real in the code Ascend users scan:
//! Python modules that declare their encoding (PEP 263: `# -*- coding: gbk -*-`,
//! which Python honours), and launch scripts whose comments are GBK (shell does
//! not care what its comments are written in). Huawei's own ModelZoo-PyTorch
//! holds both. Everything else stays UTF-8 only, as Python, notebooks and the
//! JSON they are stored in require.

use crate::walk::FileKind;

/// How a file's bytes became its text, so that a fix writes them back alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8, with or without a leading byte-order mark.
    Utf8 {
        /// Whether the file starts with a byte-order mark (kept on writing).
        bom: bool,
    },
    /// Another encoding: declared by a Python module, or GB18030 (which reads
    /// GBK and GB2312 too) for a shell script that is not UTF-8.
    Legacy(&'static encoding_rs::Encoding),
}

impl Encoding {
    /// The encoding's name as users know it (`UTF-8`, `GBK`, ...).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 { .. } => "UTF-8",
            Encoding::Legacy(e) => e.name(),
        }
    }

    /// `text` in this encoding; `None` when a character has no form in it.
    pub(crate) fn encode(self, text: &str) -> Option<Vec<u8>> {
        match self {
            Encoding::Utf8 { bom } => {
                let mut bytes = Vec::with_capacity(text.len() + 3);
                if bom {
                    bytes.extend_from_slice(BOM);
                }
                bytes.extend_from_slice(text.as_bytes());
                Some(bytes)
            }
            Encoding::Legacy(e) => {
                let (bytes, _, unmappable) = e.encode(text);
                (!unmappable).then(|| bytes.into_owned())
            }
        }
    }
}

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why bytes are not text in any encoding the file may be in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Not UTF-8, and nothing says which other encoding it is in.
    NotUtf8 {
        /// The first byte that is not UTF-8.
        offset: usize,
        /// The kind of file, for the advice.
        kind: FileKind,
    },
    /// A Python module declares an encoding that npu-mem does not know.
    UnknownDeclared {
        /// The name on its coding line.
        name: String,
    },
    /// A Python module declares an encoding its bytes are not in.
    NotDeclared {
        /// The encoding named on its coding line.
        name: &'static str,
    },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::NotUtf8 { offset, kind: FileKind::Python } => write!(
                f,
                "not valid UTF-8 (first bad byte at offset {offset}) and no other encoding is declared, so \
                 Python would not run it either; skipped: re-save it as UTF-8, or declare its encoding on \
                 its first line (`# -*- coding: gbk -*-`)"
            ),
            DecodeError::NotUtf8 { offset, kind: FileKind::Shell } => write!(
                f,
                "neither UTF-8 nor GB18030/GBK (first bad byte at offset {offset}); skipped: re-save it as UTF-8"
            ),
            DecodeError::NotUtf8 { offset, .. } => write!(
                f,
                "not valid UTF-8 (first bad byte at offset {offset}); skipped: re-save the file as UTF-8 to have it scanned"
            ),
            DecodeError::UnknownDeclared { name } => write!(
                f,
                "declares the encoding `{name}`, which npu-mem does not know; skipped: declare a standard name \
                 (utf-8, gbk, gb18030, latin-1, ...) or re-save it as UTF-8"
            ),
            DecodeError::NotDeclared { name } => write!(
                f,
                "declares the encoding {name} but is not valid {name}, so Python would not run it either; \
                 skipped: correct its coding line or re-save it as UTF-8"
            ),
        }
    }
}

/// Decodes the bytes of a file of `kind` (which hold no NUL).
pub(crate) fn decode(mut bytes: Vec<u8>, kind: FileKind) -> Result<(String, Encoding), DecodeError> {
    let bom = bytes.starts_with(BOM);
    if bom {
        bytes.drain(..BOM.len());
    }
    // A byte-order mark says UTF-8, whatever a coding line says; and where
    // every byte is ASCII, every encoding Python accepts reads the same text.
    let declared = match kind {
        FileKind::Python if !bom && !bytes.is_ascii() => declared_encoding(&bytes),
        _ => None,
    };
    if let Some(Ok(declared)) = declared.as_ref().filter(|d| **d != Ok(encoding_rs::UTF_8)) {
        return strict(declared, &bytes).ok_or(DecodeError::NotDeclared { name: declared.name() });
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, Encoding::Utf8 { bom })),
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            match (kind, declared) {
                (FileKind::Shell, _) => {
                    strict(encoding_rs::GB18030, e.as_bytes()).ok_or(DecodeError::NotUtf8 { offset, kind })
                }
                (_, Some(Ok(_))) => Err(DecodeError::NotDeclared { name: "UTF-8" }),
                (_, Some(Err(name))) => Err(DecodeError::UnknownDeclared { name }),
                _ => Err(DecodeError::NotUtf8 { offset, kind }),
            }
        }
    }
}

/// `bytes` in `encoding`, when every byte sequence is valid in it.
fn strict(encoding: &'static encoding_rs::Encoding, bytes: &[u8]) -> Option<(String, Encoding)> {
    let text = encoding.decode_without_bom_handling_and_without_replacement(bytes)?;
    Some((text.into_owned(), Encoding::Legacy(encoding)))
}

/// The encoding a Python module declares (PEP 263): a comment matching
/// `coding[:=]\s*NAME` on its first line, or on its second when the first is
/// a comment or blank, as Python reads it; `Err` with a name npu-mem does
/// not know (a UTF-8 file is still read: Python's refusal helps nobody).
fn declared_encoding(bytes: &[u8]) -> Option<Result<&'static encoding_rs::Encoding, String>> {
    let mut lines = bytes.split(|b| *b == b'\n');
    let first = lines.next().unwrap_or_default();
    let second = lines.next().filter(|_| matches!(first.trim_ascii_start().first(), None | Some(b'#')));
    let name = coding_name(first).or_else(|| second.and_then(coding_name))?;
    Some(encoding_for_python_name(&name).ok_or(name))
}

/// The NAME of a `# ... coding[:=] NAME` line, lower-cased.
fn coding_name(line: &[u8]) -> Option<String> {
    let line = line.trim_ascii_start().strip_prefix(b"#")?;
    let at = line.windows(6).position(|w| w == b"coding")? + 6;
    let rest = line.get(at..)?.strip_prefix(b":").or_else(|| line.get(at..)?.strip_prefix(b"="))?;
    let rest = rest.trim_ascii_start();
    let end = rest.iter().position(|b| !(b.is_ascii_alphanumeric() || b"-_.".contains(b))).unwrap_or(rest.len());
    (end > 0).then(|| String::from_utf8_lossy(&rest[..end]).to_ascii_lowercase())
}

/// The encoding Python means by `name`: the WHATWG label, or one of Python's
/// own aliases that the WHATWG list lacks. Like Python, a name that starts
/// with `utf-8-` or `latin-1-` is that encoding (`# -*- coding: utf-8-*-`).
fn encoding_for_python_name(name: &str) -> Option<&'static encoding_rs::Encoding> {
    let name = name.replace('_', "-");
    let prefix = ["utf-8", "latin-1", "iso-8859-1", "iso-latin-1"]
        .into_iter()
        .find(|p| name.strip_prefix(p).is_some_and(|rest| rest.starts_with('-')));
    let label = match prefix.unwrap_or(&name) {
        "utf-8-sig" | "utf8-sig" => "utf-8",
        "cp936" | "ms936" | "936" => "gbk",
        "latin-1" | "iso-latin-1" | "l1" | "iso8859-1" | "cp819" => "latin1",
        "euc-cn" | "gb2312-80" => "gb2312",
        "cp950" | "ms950" => "big5",
        "cp932" | "ms932" | "sjis" | "shift-jis" => "shift_jis",
        "cp949" | "uhc" => "euc-kr",
        other => return encoding_rs::Encoding::for_label(other.as_bytes()),
    };
    encoding_rs::Encoding::for_label(label.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GBK_COMMENT: &[u8] = b"# \xd6\xd0\xce\xc4\n"; // "# 中文" in GBK

    #[test]
    fn a_python_module_is_read_in_the_encoding_it_declares() {
        let bytes = [b"# -*- coding: gbk -*-\n" as &[u8], GBK_COMMENT, b"x = 1\n"].concat();
        let (text, encoding) = decode(bytes.clone(), FileKind::Python).unwrap();
        assert_eq!(text, "# -*- coding: gbk -*-\n# 中文\nx = 1\n");
        assert_eq!(encoding.name(), "GBK");
        assert_eq!(encoding.encode(&text), Some(bytes), "written back byte for byte");
    }

    #[test]
    fn the_declaration_may_be_on_the_second_line_after_a_comment() {
        let bytes = [b"#!/usr/bin/env python\n#coding=GBK\n" as &[u8], GBK_COMMENT].concat();
        assert_eq!(decode(bytes, FileKind::Python).unwrap().1.name(), "GBK");
        let after_code = [b"import os\n# coding: gbk\n" as &[u8], GBK_COMMENT].concat();
        assert!(matches!(decode(after_code, FileKind::Python), Err(DecodeError::NotUtf8 { .. })));
    }

    #[test]
    fn undeclared_or_misdeclared_python_is_skipped_with_the_reason() {
        let undeclared = [b"x = 1\n" as &[u8], GBK_COMMENT].concat();
        let message = decode(undeclared, FileKind::Python).unwrap_err().to_string();
        assert!(message.contains("coding: gbk"), "{message}");
        let wrong = [b"# coding: utf-8\n" as &[u8], GBK_COMMENT].concat();
        assert_eq!(decode(wrong, FileKind::Python), Err(DecodeError::NotDeclared { name: "UTF-8" }));
        let unknown = [b"# coding: klingon\n" as &[u8], GBK_COMMENT].concat();
        assert!(matches!(decode(unknown, FileKind::Python), Err(DecodeError::UnknownDeclared { .. })));
        let unknown_but_utf8 = "# coding: klingon\n# 中文\n".as_bytes().to_vec();
        assert_eq!(decode(unknown_but_utf8, FileKind::Python).unwrap().1, Encoding::Utf8 { bom: false });
        let not_gbk = b"# coding: gbk\nx = '\xff'\n".to_vec();
        assert_eq!(decode(not_gbk, FileKind::Python), Err(DecodeError::NotDeclared { name: "GBK" }));
    }

    #[test]
    fn an_ascii_module_is_utf8_whatever_it_declares() {
        let (_, encoding) = decode(b"# coding: klingon\nx = 1\n".to_vec(), FileKind::Python).unwrap();
        assert_eq!(encoding, Encoding::Utf8 { bom: false });
    }

    #[test]
    fn python_aliases_that_whatwg_lacks_are_known() {
        let names =
            [("cp936", "GBK"), ("latin-1", "windows-1252"), ("utf_8", "UTF-8"), ("GB2312", "GBK"), ("utf-8-", "UTF-8")];
        for (name, want) in names {
            let got = encoding_for_python_name(&name.to_ascii_lowercase()).map(|e| e.name());
            assert_eq!(got, Some(want), "{name}");
        }
    }

    #[test]
    fn a_shell_script_with_gbk_comments_is_read_as_gb18030() {
        let bytes = [b"#!/bin/bash\n" as &[u8], GBK_COMMENT, b"export NCCL_DEBUG=INFO\n"].concat();
        let (text, encoding) = decode(bytes.clone(), FileKind::Shell).unwrap();
        assert!(text.contains("中文") && text.contains("NCCL_DEBUG"));
        assert_eq!(encoding.encode(&text), Some(bytes));
        let neither = b"echo \x80\xff\n".to_vec();
        let message = decode(neither, FileKind::Shell).unwrap_err().to_string();
        assert!(message.contains("GB18030"), "{message}");
    }

    #[test]
    fn notebooks_are_utf8_only_and_a_bom_is_kept() {
        assert!(decode(GBK_COMMENT.to_vec(), FileKind::Notebook).is_err());
        let (text, encoding) = decode(b"\xEF\xBB\xBFx = 1\n".to_vec(), FileKind::Python).unwrap();
        assert_eq!(text, "x = 1\n");
        assert_eq!(encoding.encode(&text), Some(b"\xEF\xBB\xBFx = 1\n".to_vec()));
    }

    #[test]
    fn a_character_the_encoding_lacks_is_not_written() {
        assert_eq!(Encoding::Legacy(encoding_rs::GBK).encode("x = '\u{1F600}'"), None);
    }
}
