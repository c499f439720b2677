//! Exec streams as byte pipes: one long-lived interactive exec carries the agent's frames
//! (its stdin and stdout), and one-off execs run small commands, their input given whole,
//! to their end.

use std::time::Duration;

use lens_openshell::{
    GatewayError,
    proto::openshell::v1::{
        ExecSandboxEvent, ExecSandboxInput, ExecSandboxRequest, exec_sandbox_event::Payload, exec_sandbox_input,
        open_shell_client::OpenShellClient,
    },
    workspace_scope,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tonic::transport::Channel;

use crate::SandboxError;

/// Bytes in one stdin frame: well under the gateway's 1 MiB message limit.
const STDIN_CHUNK: usize = 256 * 1024;

/// Bytes the pipes hold before the writer waits.
const PIPE_BUFFER: usize = 1 << 20;

/// An exec request for `command` in the sandbox's home, with a request id never used before.
pub(crate) fn request(sandbox: &str, home: &str, command: Vec<String>, env: &[(String, String)]) -> ExecSandboxRequest {
    ExecSandboxRequest {
        sandbox: sandbox.to_owned(),
        command,
        workdir: home.to_owned(),
        environment: env.iter().cloned().collect(),
        no_login_shell: true,
        request_id: uuid::Uuid::new_v4().to_string(),
        workspace_scope: workspace_scope(),
        ..Default::default()
    }
}

/// A running interactive exec: write to `input` (shut it down for EOF), read `output`.
pub(crate) struct Pipes {
    pub input: DuplexStream,
    pub output: DuplexStream,
    /// The tasks that carry the bytes; aborted, the exec stream is dropped.
    pub tasks: Vec<tokio::task::AbortHandle>,
}

/// Starts `start` as an interactive exec. The command's stderr goes to the log; its
/// exit, or the stream's end or failure, is EOF on `output`.
pub(crate) async fn interactive(
    client: &mut OpenShellClient<Channel>,
    start: ExecSandboxRequest,
) -> Result<Pipes, SandboxError> {
    let (frames, mut events) = open(client, start).await?;
    let (input, mut from_lens) = tokio::io::duplex(PIPE_BUFFER);
    let (mut to_lens, output) = tokio::io::duplex(PIPE_BUFFER);
    let send = tokio::spawn(async move {
        let mut buf = vec![0u8; STDIN_CHUNK];
        loop {
            let n = match from_lens.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let frame = ExecSandboxInput { payload: Some(exec_sandbox_input::Payload::Stdin(buf[..n].to_vec())) };
            if frames.send(frame).await.is_err() {
                break;
            }
        }
        // Dropping the sender half-closes the request stream, which ends the command on
        // the gateway: Lens closes the agent's input only to let it go.
    });
    let receive = tokio::spawn(async move {
        loop {
            match events.message().await {
                Ok(Some(event)) => match event.payload {
                    Some(Payload::Stdout(out)) if to_lens.write_all(&out.data).await.is_err() => break,
                    Some(Payload::Stdout(_)) => {}
                    Some(Payload::Stderr(err)) => {
                        tracing::debug!(stderr = %crate::shown::shown(&String::from_utf8_lossy(&err.data)), "sandbox agent");
                    }
                    Some(Payload::Exit(exit)) => {
                        tracing::debug!(code = exit.exit_code, "the sandbox agent's exec ended");
                        break;
                    }
                    None => {}
                },
                Ok(None) => break,
                Err(status) => {
                    let (code, message) = (status.code(), status.message());
                    tracing::warn!(?code, message, "the sandbox agent's exec stream failed");
                    break;
                }
            }
        }
        // Dropping `to_lens` is EOF for the agent's reader.
    });
    Ok(Pipes { input, output, tasks: vec![send.abort_handle(), receive.abort_handle()] })
}

/// A small command's whole result.
pub(crate) struct Finished {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: i32,
}

/// The most input one command may be given: with the request's other fields, under the
/// gateway's 1 MiB message limit.
pub(crate) const MAX_STDIN: usize = 768 * 1024;

/// Runs a command to its end with `stdin` as its whole input, within `deadline`.
///
/// A unary `ExecSandbox` carrying the input in the request, as NVIDIA's SDK runs a
/// command: its gateway writes the input and then ends it, and the command runs to its
/// exit. An interactive exec cannot do this: when the client's side of its input ends,
/// the gateway closes the command's channel and the command is killed.
pub(crate) async fn run(
    client: &mut OpenShellClient<Channel>,
    mut start: ExecSandboxRequest,
    stdin: &[u8],
    deadline: Duration,
) -> Result<Finished, SandboxError> {
    if stdin.len() > MAX_STDIN {
        return Err(SandboxError::Backend(format!("a command's input is over {MAX_STDIN} bytes")));
    }
    start.stdin = stdin.to_vec();
    let work = async {
        let mut events = client
            .exec_sandbox(start)
            .await
            .map_err(|s| gateway_error(GatewayError::rpc("ExecSandbox", &s)))?
            .into_inner();
        let mut out = Finished { stdout: Vec::new(), stderr: Vec::new(), code: -1 };
        loop {
            let event = events.message().await.map_err(|s| gateway_error(GatewayError::rpc("ExecSandbox", &s)))?;
            match event.and_then(|e| e.payload) {
                Some(Payload::Stdout(o)) => out.stdout.extend(o.data),
                Some(Payload::Stderr(e)) => out.stderr.extend(e.data),
                Some(Payload::Exit(x)) => {
                    out.code = x.exit_code;
                    return Ok(out);
                }
                None => return Err(SandboxError::Backend("the exec stream ended without an exit".into())),
            }
        }
    };
    tokio::time::timeout(deadline, work)
        .await
        .map_err(|_| SandboxError::Backend(format!("a command in the sandbox took over {} s", deadline.as_secs())))?
}

/// An interactive exec's two halves: stdin frames in, events out.
type Opened = (tokio::sync::mpsc::Sender<ExecSandboxInput>, tonic::Streaming<ExecSandboxEvent>);

/// Opens an interactive exec with its `start` frame.
async fn open(client: &mut OpenShellClient<Channel>, start: ExecSandboxRequest) -> Result<Opened, SandboxError> {
    let (frames, requests) = tokio::sync::mpsc::channel::<ExecSandboxInput>(4);
    let first = ExecSandboxInput { payload: Some(exec_sandbox_input::Payload::Start(start)) };
    frames.send(first).await.map_err(|_| SandboxError::Backend("the exec stream closed".into()))?;
    let events = client
        .exec_sandbox_interactive(tokio_stream::wrappers::ReceiverStream::new(requests))
        .await
        .map_err(|s| gateway_error(GatewayError::rpc("ExecSandboxInteractive", &s)))?
        .into_inner();
    Ok((frames, events))
}

/// A gateway failure as the driver's error: a connection failure is "unavailable".
pub(crate) fn gateway_error(e: GatewayError) -> SandboxError {
    match e {
        GatewayError::Connect(m) | GatewayError::Certificates(m) => SandboxError::Unavailable(m),
        e if e.code() == Some("Unavailable") => SandboxError::Unavailable(e.to_string()),
        e => SandboxError::Backend(e.to_string()),
    }
}
