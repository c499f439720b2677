//! The agent requests behind the driver's calls, and what their replies mean: the same
//! for every driver that runs the agent.

use std::time::Duration;

use lens_sandbox_agent::protocol::{Reply, Request};

use crate::{
    ExecRequest, FileEntry, SandboxError,
    agent_core::{Env, OneRequest, RunRequest},
    link::backend,
};

/// A command, with its own variables added to the sandbox's.
pub(crate) fn exec(request: &ExecRequest) -> RunRequest {
    let timeout_ms = request.timeout.as_millis() as u64;
    let (argv, own) = (request.argv.clone(), request.env.clone());
    Box::new(move |id, mut env: Env| {
        env.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
        Request::Exec { id, argv: argv.clone(), env, timeout_ms }
    })
}

/// A cell in the conversation's kernel.
pub(crate) fn python(code: &str, timeout: Duration) -> RunRequest {
    let timeout_ms = timeout.as_millis() as u64;
    let code = code.to_owned();
    Box::new(move |id, env| Request::Python { id, code: code.clone(), env, timeout_ms })
}

pub(crate) fn write_part(path: &str, part: crate::FilePart, bytes: Vec<u8>) -> OneRequest {
    let path = path.to_owned();
    Box::new(move |id| Request::WriteFile { id, path, data: bytes, offset: part.offset, last: part.last })
}

pub(crate) fn restart_python() -> OneRequest {
    Box::new(|id| Request::RestartPython { id })
}

pub(crate) fn drop_write(path: &str) -> OneRequest {
    let path = path.to_owned();
    Box::new(move |id| Request::DropWrite { id, path })
}

pub(crate) fn read_part(path: &str, max_bytes: u64, offset: u64) -> OneRequest {
    let path = path.to_owned();
    Box::new(move |id| Request::ReadFile {
        id,
        path,
        max_bytes,
        offset,
        len: lens_sandbox_agent::protocol::FILE_PART as u64,
    })
}

pub(crate) fn list_files(path: &str) -> OneRequest {
    let path = path.to_owned();
    Box::new(move |id| Request::ListFiles { id, path })
}

/// The bytes of a `read_part` reply, and the file's size.
pub(crate) fn file_part(reply: Reply) -> Result<(Vec<u8>, u64), SandboxError> {
    match reply {
        Reply::File { data, size, .. } => Ok((data, size)),
        other => Err(backend(format!("unexpected reply {other:?}"))),
    }
}

/// The entries of a `list_files` reply.
pub(crate) fn listing(reply: Reply) -> Result<Vec<FileEntry>, SandboxError> {
    match reply {
        Reply::Files { entries, .. } => Ok(entries
            .into_iter()
            .map(|e| FileEntry {
                path: e.path,
                size: e.size,
                is_dir: e.is_dir,
                modified_ms: e.modified_ms,
                special: e.special,
                inode: e.inode,
            })
            .collect()),
        other => Err(backend(format!("unexpected reply {other:?}"))),
    }
}
