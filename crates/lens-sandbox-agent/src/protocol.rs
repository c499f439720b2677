//! The agent's wire protocol. Each frame is a big-endian u32 length of the rest, a
//! big-endian u32 length of its JSON, the JSON, then the message's bytes as they are
//! (a file's part, a program's output, a proxy connection's data): bytes cross
//! unencoded, so a file moves at the pipe's speed, not at JSON's. Requests go in on
//! stdin; replies come out on stdout, tagged with the request's id, and may interleave
//! between requests.

use std::io::{self, Read, Write};

use lens_types::{OutputStream, RunEnding};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// Frames larger than this are refused. Files move in parts of [`FILE_PART`] bytes, so
/// no frame carries more than a part of a file, whatever its size.
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// Bytes of a file one `WriteFile` or `File` frame carries at most: a file of any size
/// moves in parts, and memory on both ends stays flat.
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
    /// Write a part of a file (at most [`FILE_PART`] bytes) under the workspace, making
    /// folders as needed: the part at `offset` (0 begins the file afresh, beside it);
    /// `last` puts the whole file in place, so a reader never sees half of it.
    WriteFile {
        id: u64,
        path: String,
        #[serde(skip)]
        data: Vec<u8>,
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
    /// End the Python kernel: the next cell starts a fresh one (no names), the files stay.
    RestartPython { id: u64 },
    /// The server's decision on a proxy connection the agent asked about.
    NetOpen { id: u64, ok: bool, message: String },
    /// Bytes from the far end of a proxy connection.
    NetData {
        id: u64,
        #[serde(skip)]
        data: Vec<u8>,
    },
    /// The far end of a proxy connection closed.
    NetClose { id: u64 },
}

/// One entry of a folder listing. Links are not followed: a link to a folder is no
/// folder here, so a walk of the listing never leaves the workspace or loops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: String,
    pub size: u64,
    pub is_dir: bool,
    /// When it last changed, Unix milliseconds; absent from an older agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_ms: Option<i64>,
    /// What it is when neither a regular file nor a folder; absent from an older agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub special: Option<Special>,
    /// A regular file with more than one name (a hard link): its device and inode, the
    /// same for each of its names, so a copy makes the second name a link to the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inode: Option<[u64; 2]>,
}

/// An entry that is neither a regular file nor a folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Special {
    /// A symbolic link: its text as written, and whether it leads nowhere (seen from
    /// inside the sandbox; a link may lead out of the workspace and still not dangle).
    Link { target: String, dangling: bool },
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character or block device.
    Device,
    /// An entry whose name is not UTF-8 text (its path is shown with U+FFFD in its place):
    /// it cannot be asked for by name, so no copy can take it, nor anything in it.
    NotTextName,
}

impl Special {
    /// Why a copy leaves it out, or `None` when a copy keeps it (a link that leads somewhere).
    pub fn left_out(&self) -> Option<&'static str> {
        match self {
            Special::Link { dangling: false, .. } => None,
            Special::Link { dangling: true, .. } => Some("a link that leads nowhere"),
            Special::Fifo => Some("a named pipe"),
            Special::Socket => Some("a socket"),
            Special::Device => Some("a device"),
            Special::NotTextName => Some("a name that is not UTF-8 text"),
        }
    }
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
        /// Whether the agent's own seccomp allow-list is in force.
        seccomp: bool,
        /// Whether the programs it starts are kept from signalling it (Landlock ABI 6).
        #[serde(default)]
        signals_scoped: bool,
        /// Seccomp filters already in force before the agent's (an OpenShell sandbox's
        /// supervisor installs its own): 0 on this machine's sandboxes.
        #[serde(default)]
        seccomp_inherited: u32,
    },
    /// A chunk of a running command's output (bytes: programs print bytes, not text).
    Output {
        id: u64,
        stream: OutputStream,
        #[serde(skip)]
        data: Vec<u8>,
    },
    /// A command ended; nothing more comes for this id. `files`: what it created or
    /// changed in the workspace (hidden files aside).
    Ended {
        id: u64,
        ending: RunEnding,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<Entry>,
    },
    /// A part of a file's contents, and the file's whole size.
    File {
        id: u64,
        #[serde(skip)]
        data: Vec<u8>,
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
    /// Bytes a program sent on an open proxy connection.
    NetData {
        id: u64,
        #[serde(skip)]
        data: Vec<u8>,
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

/// A message that may carry bytes beside its JSON.
pub trait Message: Serialize + DeserializeOwned {
    /// The bytes sent after the JSON (empty for most messages).
    fn bytes(&self) -> &[u8];
    /// Where the bytes read after the JSON go; `None` for a message that has none.
    fn bytes_mut(&mut self) -> Option<&mut Vec<u8>>;
}

impl Message for Request {
    fn bytes(&self) -> &[u8] {
        match self {
            Request::WriteFile { data, .. } | Request::NetData { data, .. } => data,
            _ => &[],
        }
    }

    fn bytes_mut(&mut self) -> Option<&mut Vec<u8>> {
        match self {
            Request::WriteFile { data, .. } | Request::NetData { data, .. } => Some(data),
            _ => None,
        }
    }
}

impl Message for Reply {
    fn bytes(&self) -> &[u8] {
        match self {
            Reply::Output { data, .. } | Reply::File { data, .. } | Reply::NetData { data, .. } => data,
            _ => &[],
        }
    }

    fn bytes_mut(&mut self) -> Option<&mut Vec<u8>> {
        match self {
            Reply::Output { data, .. } | Reply::File { data, .. } | Reply::NetData { data, .. } => Some(data),
            _ => None,
        }
    }
}

/// Why a frame cannot be taken.
fn invalid(message: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// One whole frame for `msg`, or an error when it would be larger than [`MAX_FRAME`].
pub fn encode<T: Message>(msg: &T) -> io::Result<Vec<u8>> {
    let json = serde_json::to_vec(msg).map_err(io::Error::other)?;
    let bytes = msg.bytes();
    let rest = 4 + json.len() + bytes.len();
    if rest > MAX_FRAME {
        return Err(invalid(format!("frame too large: {rest} bytes")));
    }
    let mut frame = Vec::with_capacity(4 + rest);
    frame.extend_from_slice(&(rest as u32).to_be_bytes());
    frame.extend_from_slice(&(json.len() as u32).to_be_bytes());
    frame.extend_from_slice(&json);
    frame.extend_from_slice(bytes);
    Ok(frame)
}

/// A frame's head, read: (the JSON's length, the bytes' length), both checked.
pub fn lengths(head: [u8; 8]) -> io::Result<(usize, usize)> {
    let [a, b, c, d, e, f, g, h] = head;
    let rest = u32::from_be_bytes([a, b, c, d]) as usize;
    let json = u32::from_be_bytes([e, f, g, h]) as usize;
    if rest > MAX_FRAME {
        return Err(invalid("frame too large"));
    }
    let bytes = rest.checked_sub(4 + json).ok_or_else(|| invalid("frame's parts do not add up"))?;
    Ok((json, bytes))
}

/// The message of a frame's JSON and bytes; bytes sent with a message that has none
/// make the frame malformed.
pub fn decode<T: Message>(json: &[u8], bytes: Vec<u8>) -> io::Result<T> {
    let mut msg: T = serde_json::from_slice(json).map_err(invalid)?;
    match msg.bytes_mut() {
        Some(data) => *data = bytes,
        None if bytes.is_empty() => {}
        None => return Err(invalid("bytes sent with a message that takes none")),
    }
    Ok(msg)
}

/// Writes one frame and flushes.
pub fn write_frame<W: Write, T: Message>(w: &mut W, msg: &T) -> io::Result<()> {
    w.write_all(&encode(msg)?)?;
    w.flush()
}

/// Reads one frame; `Ok(None)` at a clean end of input.
pub fn read_frame<R: Read, T: Message>(r: &mut R) -> io::Result<Option<T>> {
    let mut head = [0u8; 8];
    match r.read_exact(&mut head[..4]) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    r.read_exact(&mut head[4..])?;
    let (json_len, bytes_len) = lengths(head)?;
    let mut json = vec![0u8; json_len];
    r.read_exact(&mut json)?;
    let mut bytes = vec![0u8; bytes_len];
    r.read_exact(&mut bytes)?;
    decode(&json, bytes).map(Some)
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
    fn bytes_cross_as_they_are() {
        let every: Vec<u8> = (0..=255).collect();
        let reply = Reply::File { id: 3, data: every.clone(), size: 256 };
        let frame = encode(&reply).unwrap();
        assert_eq!(frame.len(), 8 + r#"{"file":{"id":3,"size":256}}"#.len() + 256, "no encoding of the bytes");
        assert!(frame.ends_with(&every));
        assert_eq!(read_frame::<_, Reply>(&mut frame.as_slice()).unwrap(), Some(reply));
        let write = Request::WriteFile { id: 1, path: "a".into(), data: vec![0, 10, 13], offset: 0, last: true };
        assert_eq!(read_frame::<_, Request>(&mut encode(&write).unwrap().as_slice()).unwrap(), Some(write));
    }

    /// A frame of the given parts, whatever they claim.
    fn frame(rest: u32, json: &[u8], bytes: &[u8]) -> Vec<u8> {
        let mut f = rest.to_be_bytes().to_vec();
        f.extend_from_slice(&(json.len() as u32).to_be_bytes());
        f.extend_from_slice(json);
        f.extend_from_slice(bytes);
        f
    }

    #[test]
    fn oversized_and_malformed_frames_are_errors() {
        let huge = ((MAX_FRAME + 1) as u32).to_be_bytes();
        assert!(read_frame::<_, Request>(&mut huge.as_slice()).is_err());
        assert!(read_frame::<_, Request>(&mut frame(7, b"{x}", b"").as_slice()).is_err(), "not JSON");
        let kill = br#"{"kill":{"id":1}}"#;
        assert!(read_frame::<_, Request>(&mut frame(3, kill, b"").as_slice()).is_err(), "parts larger than the frame");
        let with_bytes = frame(4 + kill.len() as u32 + 2, kill, b"hi");
        assert!(read_frame::<_, Request>(&mut with_bytes.as_slice()).is_err(), "bytes with a message that has none");
        let fine = frame(4 + kill.len() as u32, kill, b"");
        assert_eq!(read_frame::<_, Request>(&mut fine.as_slice()).unwrap(), Some(Request::Kill { id: 1 }));
        let too_big = Request::WriteFile { id: 1, path: "a".into(), data: vec![0; MAX_FRAME], offset: 0, last: true };
        assert!(encode(&too_big).is_err());
    }
}
