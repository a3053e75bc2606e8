//! The base protocol over stdio: messages framed by `Content-Length`
//! headers, read on one thread and written on another. Unlike
//! lsp-server's own stdio transport, which stops at the first malformed
//! message, a bad message here is reported and skipped: content that is
//! not UTF-8 is read with U+FFFD in place of the bad bytes (and said so), a
//! body that is not JSON-RPC, or a header that cannot be read, is reported
//! and the next message read. Only the end of input ends the reading.

use crossbeam_channel::{unbounded, Receiver, Sender};
use lsp_server::Message;
use std::io::{self, BufRead, Read, Write};

/// The largest message body read (a 16 MiB file, JSON-escaped, fits).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// What the reader hands on.
#[derive(Debug)]
pub(super) enum Incoming {
    /// A message; `lossy` when its content was not UTF-8 and was read with replacements.
    Message {
        /// The message.
        message: Message,
        /// Whether bytes that are not UTF-8 were replaced.
        lossy: bool,
    },
    /// Input that is not a message, and why.
    Malformed(String),
}

/// The two ends of the connection: messages to send, and what was read.
pub(super) struct Transport {
    /// Messages to the client (written in order by the writer thread).
    pub sender: Sender<Message>,
    /// What the client sent; closed at the end of input.
    pub receiver: Receiver<Incoming>,
}

/// Why the transport's threads cannot start.
#[derive(Debug)]
pub struct ServerError(pub io::Error);

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot start the server's reader and writer threads: {}; free some resources and retry", self.0)
    }
}

impl std::error::Error for ServerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Reads stdin and writes stdout on threads of their own.
pub(super) fn stdio() -> Result<Transport, ServerError> {
    let (to_client, outgoing) = unbounded::<Message>();
    let (incoming, from_client) = unbounded::<Incoming>();
    std::thread::Builder::new()
        .name("npu-mem-writer".into())
        .spawn(move || {
            let mut stdout = io::stdout().lock();
            // A client that stopped reading ends the writing; the server sees its input end.
            for message in outgoing {
                if message.write(&mut stdout).and_then(|()| stdout.flush()).is_err() {
                    break;
                }
            }
        })
        .map_err(ServerError)?;
    std::thread::Builder::new()
        .name("npu-mem-reader".into())
        .spawn(move || read_all(&mut io::stdin().lock(), &incoming))
        .map_err(ServerError)?;
    Ok(Transport { sender: to_client, receiver: from_client })
}

/// Reads messages from `input` until it ends (or nobody listens).
pub(super) fn read_all(input: &mut impl BufRead, incoming: &Sender<Incoming>) {
    loop {
        let item = match read_body(input) {
            Ok(None) => return,
            Ok(Some(Ok(body))) => parse(&body),
            Ok(Some(Err(problem))) => Incoming::Malformed(problem),
            Err(_) => return,
        };
        if incoming.send(item).is_err() {
            return;
        }
    }
}

/// A message from its body's bytes.
fn parse(body: &[u8]) -> Incoming {
    let text = String::from_utf8_lossy(body);
    let lossy = matches!(text, std::borrow::Cow::Owned(_));
    match serde_json::from_str::<Message>(&text) {
        Ok(message) => Incoming::Message { message, lossy },
        Err(e) => Incoming::Malformed(format!("a message that is not JSON-RPC ({e}); it was skipped")),
    }
}

/// The next body: `Ok(None)` at the end of input, `Ok(Some(Err))` for a
/// message that cannot be read (already skipped), `Err` when input fails.
fn read_body(input: &mut impl BufRead) -> io::Result<Option<Result<Vec<u8>, String>>> {
    let mut length: Option<usize> = None;
    let mut problem = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        let header = String::from_utf8_lossy(&line);
        let header = header.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() || problem.is_some() {
                break;
            }
            // Blank lines between messages are skipped.
            continue;
        }
        match header.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => problem = Some(format!("a Content-Length that is not a number ({header:?})")),
                }
            }
            Some(_) => {}
            None => problem = Some(format!("a header line that is not `Name: value` ({header:?})")),
        }
    }
    let Some(length) = length else {
        return Ok(Some(Err(problem.unwrap_or_default() + "; the message was skipped")));
    };
    if length > MAX_BODY {
        io::copy(&mut input.take(length as u64), &mut io::sink())?;
        return Ok(Some(Err(format!("a message of {length} bytes, over the {MAX_BODY}-byte limit; it was skipped"))));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    Ok(Some(Ok(body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn bad_messages_are_reported_and_the_next_one_is_read() {
        let mut input = Vec::new();
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
        input.extend(frame(b"{not json"));
        input.extend(b"garbage without a colon\r\n\r\n");
        input.extend(frame(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"text\":\"a\xff\xfeb\"}}"));
        let (tx, rx) = unbounded();
        read_all(&mut io::Cursor::new(input), &tx);
        drop(tx);
        let got: Vec<Incoming> = rx.into_iter().collect();
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(matches!(&got[0], Incoming::Message { lossy: false, .. }));
        assert!(matches!(&got[1], Incoming::Malformed(m) if m.contains("not JSON-RPC")));
        assert!(matches!(&got[2], Incoming::Malformed(m) if m.contains("header")));
        match &got[3] {
            Incoming::Message { message: Message::Notification(n), lossy: true } => {
                assert_eq!(n.params["text"], "a\u{fffd}\u{fffd}b");
            }
            other => panic!("{other:?}"),
        }
    }
}
