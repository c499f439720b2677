//! The agent's wire protocol: each frame is a big-endian u32 length, then that many bytes
//! of JSON. Requests go in on stdin; replies come out on stdout, tagged with the
//! request's id, and may interleave between requests.

use std::io::{self, Read, Write};

use lens_types::{OutputStream, RunEnding};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// Frames larger than this are refused. Files move in parts of [`FILE_PART`] bytes, so
/// no frame carries more than about 350 KB of a file, whatever its size.
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// Bytes of a file one `WriteFile` or `File` frame carries at most (base64 makes them a
/// third more): a file of any size moves in parts, and memory on both ends stays flat.
pub const FILE_PART: usize = 256 * 1024;

fn whole() -> u64 {
    u64::MAX
}

fn yes() -> bool {
    true
}

/// What the server asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Run a command in the workspace, in its own process group.
    Exec { id: u64, argv: Vec<String>, env: Vec<(String, String)>, timeout_ms: u64 },
    /// Run Python in the sandbox's one kernel, where names persist between cells.
    Python { id: u64, code: String, env: Vec<(String, String)>, timeout_ms: u64 },
    /// Kill a running command's whole process group; its ending says `cut_short`.
    Kill { id: u64 },
    /// Write a part of a file (base64, at most [`FILE_PART`] bytes) under the workspace,
    /// making folders as needed: the part at `offset` (0 begins the file afresh, beside
    /// it); `last` puts the whole file in place, so a reader never sees half of it.
    WriteFile {
        id: u64,
        path: String,
        data: String,
        #[serde(default)]
        offset: u64,
        #[serde(default = "yes")]
        last: bool,
    },
    /// Forget a write begun and not finished (its part-written file goes).
    DropWrite { id: u64, path: String },
    /// Read up to `len` bytes (at most [`FILE_PART`]) of a file under the workspace from
    /// `offset`, refusing a file larger than `max_bytes`.
    ReadFile {
        id: u64,
        path: String,
        max_bytes: u64,
        #[serde(default)]
        offset: u64,
        #[serde(default = "whole")]
        len: u64,
    },
    /// List a folder under the workspace.
    ListFiles { id: u64, path: String },
    /// The server's decision on a proxy connection the agent asked about.
    NetOpen { id: u64, ok: bool, message: String },
    /// Bytes from the far end of a proxy connection (base64).
    NetData { id: u64, data: String },
    /// The far end of a proxy connection closed.
    NetClose { id: u64 },
}

/// One entry of a folder listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: String,
    pub size: u64,
    pub is_dir: bool,
}

/// What the agent answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// The agent's first frame: it has confined itself and serves requests now. The
    /// driver moves the sandbox into its cgroup before it asks anything.
    Ready {
        id: u64,
        /// The Landlock ABI in use (at least 3).
        landlock_abi: u32,
        /// Whether every Landlock right asked for is enforced.
        landlock_full: bool,
        seccomp: bool,
        /// Whether the programs it starts are kept from signalling it (Landlock ABI 6).
        #[serde(default)]
        signals_scoped: bool,
    },
    /// A chunk of a running command's output (base64: programs print bytes, not text).
    Output {
        id: u64,
        stream: OutputStream,
        data: String,
    },
    /// A command ended; nothing more comes for this id. `files`: what it created or
    /// changed in the workspace (hidden files aside).
    Ended {
        id: u64,
        ending: RunEnding,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<Entry>,
    },
    /// A part of a file's contents (base64), and the file's whole size.
    File {
        id: u64,
        data: String,
        #[serde(default)]
        size: u64,
    },
    Files {
        id: u64,
        entries: Vec<Entry>,
    },
    /// A write or a kill was done.
    Done {
        id: u64,
    },
    /// A request failed; the message is fit to show, the kind is for the server to act on.
    Failed {
        id: u64,
        message: String,
        #[serde(default, skip_serializing_if = "FailKind::is_other")]
        kind: FailKind,
    },
    /// A program in the sandbox asked the proxy for `target` (`host:port` for CONNECT,
    /// the URL for anything else); the server decides. Connection ids start at [`NET_IDS`].
    NetConnect {
        id: u64,
        method: String,
        target: String,
    },
    /// Bytes a program sent on an open proxy connection (base64).
    NetData {
        id: u64,
        data: String,
    },
    /// The program closed its proxy connection.
    NetClose {
        id: u64,
    },
}

/// What a `Failed` reply was about, so the server need not read its words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailKind {
    #[default]
    Other,
    /// The path leaves the workspace.
    BadPath,
    /// No such file or folder.
    NotFound,
    /// The file is larger than the request allows.
    TooLarge,
    /// The workspace's disk quota is used up.
    Full,
}

impl FailKind {
    pub fn is_other(&self) -> bool {
        *self == FailKind::Other
    }
}

/// Proxy connection ids count from here, apart from the server's request ids.
pub const NET_IDS: u64 = 1 << 48;

/// The port of the egress proxy inside every sandbox (on its loopback).
pub const PROXY_PORT: u16 = 3128;

/// Writes one frame and flushes.
pub fn write_frame<W: Write, T: Serialize>(w: &mut W, msg: &T) -> io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(io::Error::other)?;
    if body.len() > MAX_FRAME {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "frame too large"));
    }
    w.write_all(&(body.len() as u32).to_be_bytes())?;
    w.write_all(&body)?;
    w.flush()
}

/// Reads one frame; `Ok(None)` at a clean end of input.
pub fn read_frame<R: Read, T: DeserializeOwned>(r: &mut R) -> io::Result<Option<T>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "frame too large"));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    serde_json::from_slice(&body).map(Some).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_end_cleanly() {
        let mut buf = Vec::new();
        let req = Request::Exec { id: 7, argv: vec!["true".into()], env: vec![], timeout_ms: 100 };
        write_frame(&mut buf, &req).unwrap();
        write_frame(&mut buf, &Request::Kill { id: 7 }).unwrap();
        let mut r = buf.as_slice();
        assert_eq!(read_frame::<_, Request>(&mut r).unwrap(), Some(req));
        assert_eq!(read_frame::<_, Request>(&mut r).unwrap(), Some(Request::Kill { id: 7 }));
        assert_eq!(read_frame::<_, Request>(&mut r).unwrap(), None);
    }

    #[test]
    fn oversized_and_malformed_frames_are_errors() {
        let huge = ((MAX_FRAME + 1) as u32).to_be_bytes();
        assert!(read_frame::<_, Request>(&mut huge.as_slice()).is_err());
        let mut bad = 3u32.to_be_bytes().to_vec();
        bad.extend_from_slice(b"{x}");
        assert!(read_frame::<_, Request>(&mut bad.as_slice()).is_err());
    }
}
