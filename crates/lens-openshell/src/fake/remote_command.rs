//! The command line the gateway runs for an exec, through the sandbox's shell over SSH:
//! `cd '<workdir>' && K='v' '<arg>' ...`, built and quoted exactly as NVIDIA's gateway
//! does (ported from `crates/openshell-server/src/grpc/sandbox.rs`,
//! `build_remote_exec_command` and `shell_escape`, Apache 2.0, commit 2f7fb6559), so a
//! quoting mistake on either side shows here as it would there.

use tonic::Status;

use crate::proto::openshell::v1::ExecSandboxRequest;

/// The gateway's limit on the assembled command line.
const MAX_COMMAND_STRING_LEN: usize = 256 * 1024;

/// A value holds a null byte, which would cut the shell's parsing short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NullByte;

/// A value as one word of a POSIX shell command: safe characters as they are, anything
/// else in single quotes (an embedded quote as `'"'"'`); a null byte is refused.
pub fn shell_escape(value: &str) -> Result<String, NullByte> {
    if value.bytes().any(|b| b == 0) {
        return Err(NullByte);
    }
    if value.is_empty() {
        return Ok("''".to_owned());
    }
    if value.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'/' | b'-' | b'_')) {
        return Ok(value.to_owned());
    }
    Ok(format!("'{}'", value.replace('\'', "'\"'\"'")))
}

/// `^[A-Za-z_][A-Za-z0-9_]*$`, the gateway's rule for environment names.
fn valid_env_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The gateway's limits on an exec's fields (its `validation.rs`).
const MAX_EXEC_COMMAND_ARGS: usize = 1024;
const MAX_EXEC_ARG_LEN: usize = 32 * 1024;
const MAX_EXEC_WORKDIR_LEN: usize = 4096;

/// The gateway's checks of an exec's fields before it builds the line, as it words them
/// (ported from its `validate_exec_request_fields`): at most 1024 arguments of 32 KiB,
/// no null byte in them; environment values of at most 32 KiB with no null byte, newline
/// or carriage return; no `OPENSHELL_` names; a workdir of at most 4096 bytes, on one line.
fn validate(request: &ExecSandboxRequest) -> Result<(), Status> {
    let refuse = |m: String| Err(Status::invalid_argument(m));
    if request.command.len() > MAX_EXEC_COMMAND_ARGS {
        return refuse(format!("command array exceeds {MAX_EXEC_COMMAND_ARGS} argument limit"));
    }
    for (i, arg) in request.command.iter().enumerate() {
        if arg.len() > MAX_EXEC_ARG_LEN {
            return refuse(format!("command argument {i} exceeds {MAX_EXEC_ARG_LEN} byte limit"));
        }
        if arg.bytes().any(|b| b == 0) {
            return refuse(format!("command argument {i} contains null bytes"));
        }
    }
    let one_line = |value: &str, what: &str| {
        if value.bytes().any(|b| b == 0) {
            return refuse(format!("{what} contains null bytes"));
        }
        if value.bytes().any(|b| b == b'\n' || b == b'\r') {
            return refuse(format!("{what} contains newline or carriage return characters"));
        }
        Ok(())
    };
    for (key, value) in &request.environment {
        if value.len() > MAX_EXEC_ARG_LEN {
            return refuse(format!("environment value for '{key}' exceeds {MAX_EXEC_ARG_LEN} byte limit"));
        }
        one_line(value, &format!("environment value for '{key}'"))?;
        if !valid_env_key(key) {
            return refuse(format!("environment keys must match ^[A-Za-z_][A-Za-z0-9_]*$; got '{key}'"));
        }
        if key.starts_with("OPENSHELL_") && key != "OPENSHELL_PYFUNC_B64" {
            return refuse(format!("environment keys starting with OPENSHELL_ are reserved; got '{key}'"));
        }
    }
    if request.workdir.len() > MAX_EXEC_WORKDIR_LEN {
        return refuse(format!("workdir exceeds {MAX_EXEC_WORKDIR_LEN} byte limit"));
    }
    one_line(&request.workdir, "workdir")
}

/// The command line for `request`, with `workdir` standing for its `workdir` (the fake
/// may put the sandbox's home elsewhere); the gateway's refusals as it words them.
pub fn build(request: &ExecSandboxRequest, workdir: &str) -> Result<String, Status> {
    if request.command.is_empty() {
        return Err(Status::invalid_argument("command is required"));
    }
    validate(request)?;
    if request.environment.keys().any(|key| !valid_env_key(key)) {
        return Err(Status::invalid_argument("environment keys must match ^[A-Za-z_][A-Za-z0-9_]*$"));
    }
    let failed = |e: &str| Status::invalid_argument(format!("command construction failed: {e}"));
    let escape = |value: &str| shell_escape(value).map_err(|NullByte| failed("value contains null bytes"));
    let mut env: Vec<_> = request.environment.iter().collect();
    env.sort_by_key(|(key, _)| *key);
    let mut parts = Vec::with_capacity(env.len() + request.command.len());
    for (key, value) in env {
        parts.push(format!("{key}={}", escape(value)?));
    }
    for arg in &request.command {
        parts.push(escape(arg)?);
    }
    let command = parts.join(" ");
    let line = if workdir.is_empty() { command } else { format!("cd {} && {command}", escape(workdir)?) };
    if line.len() > MAX_COMMAND_STRING_LEN {
        return Err(failed(&format!("assembled command string exceeds {MAX_COMMAND_STRING_LEN} byte limit")));
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_as_the_gateway_quotes_them() {
        assert_eq!(shell_escape("").unwrap(), "''");
        assert_eq!(shell_escape("/usr/bin/python3.11").unwrap(), "/usr/bin/python3.11");
        assert_eq!(shell_escape("a b").unwrap(), "'a b'");
        assert_eq!(shell_escape("it's").unwrap(), "'it'\"'\"'s'");
        assert_eq!(shell_escape("a\0b"), Err(NullByte));
        let request = ExecSandboxRequest {
            command: vec!["echo".into(), "$HOME".into()],
            environment: [("B".to_owned(), "2 3".to_owned()), ("A".to_owned(), "1".to_owned())].into(),
            ..Default::default()
        };
        assert_eq!(build(&request, "/sandbox/w d").unwrap(), "cd '/sandbox/w d' && A=1 B='2 3' echo '$HOME'");
        let bad = ExecSandboxRequest { environment: [("1X".to_owned(), String::new())].into(), ..request };
        assert_eq!(build(&bad, "").unwrap_err().code(), tonic::Code::InvalidArgument);
    }
}
