//! The fake gateway keeps the real one's lifecycle and refusals, and the client's
//! mutual TLS fails with a clear sentence, never a hang, for each wrong certificate.

use std::{path::Path, time::Duration};

use lens_openshell::proto::openshell::sandbox::v1::{NetworkBinary, NetworkEndpoint, NetworkPolicyRule, SandboxPolicy};
use lens_openshell::{
    GatewayAddress, GatewayError, connect,
    fake::{FakeGateway, FakeOptions, write_certs},
    proto::openshell::v1::{
        CreateSandboxRequest, DeleteSandboxRequest, DeletionOutcome, ExecSandboxEvent, ExecSandboxInput,
        ExecSandboxRequest, GetSandboxRequest, HealthRequest, SandboxPhase, SandboxSpec, SandboxTemplate,
        ServiceStatus, exec_sandbox_event::Payload, exec_sandbox_input, open_shell_client::OpenShellClient,
    },
    workspace_scope,
};
use tonic::transport::Channel;

/// A policy whose rule `rule` lets any program out to `endpoints`.
fn letting_out(rule: &str, endpoints: Vec<NetworkEndpoint>) -> SandboxPolicy {
    let binaries = vec![NetworkBinary { path: "/**".into() }];
    let rule_of = NetworkPolicyRule { name: rule.into(), endpoints, binaries };
    SandboxPolicy { network_policies: [(rule.to_owned(), rule_of)].into(), ..Default::default() }
}

/// `host` on 443.
fn https(host: &str) -> NetworkEndpoint {
    NetworkEndpoint { host: host.into(), ports: vec![443], ..Default::default() }
}

fn address(fake: &FakeGateway, cert_dir: &Path, server_name: Option<&str>) -> GatewayAddress {
    GatewayAddress {
        address: fake.address_string(),
        cert_dir: cert_dir.to_owned(),
        server_name: server_name.map(str::to_owned),
    }
}

async fn client(fake: &FakeGateway) -> OpenShellClient<Channel> {
    connect(&address(fake, fake.cert_dir(), None)).await.expect("connects")
}

/// Connects within a generous deadline: a wrong certificate must fail, not hang.
async fn connect_fails(to: &GatewayAddress) -> String {
    let result = tokio::time::timeout(Duration::from_secs(60), connect(to)).await.expect("no hang");
    match result {
        Err(e) => e.to_string(),
        Ok(mut c) => match c.health(HealthRequest {}).await {
            Err(status) => GatewayError::rpc("Health", &status).to_string(),
            Ok(_) => panic!("a wrong certificate was taken"),
        },
    }
}

#[tokio::test]
async fn health_answers_over_mutual_tls() {
    let fake = FakeGateway::start().await.unwrap();
    let health = client(&fake).await.health(HealthRequest {}).await.unwrap().into_inner();
    assert_eq!(health.status, ServiceStatus::Healthy as i32);
    assert_eq!(health.version, "0.1.4");
}

#[tokio::test]
async fn a_client_certificate_from_another_ca_is_refused_with_a_sentence() {
    let fake = FakeGateway::start().await.unwrap();
    let other = tempfile::tempdir().unwrap();
    write_certs(other.path(), &["localhost"]).unwrap();
    // The gateway's CA, but the client certificate of another.
    let mixed = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(mixed.path().join("client")).unwrap();
    std::fs::copy(fake.cert_dir().join("ca.crt"), mixed.path().join("ca.crt")).unwrap();
    for f in ["client/tls.crt", "client/tls.key"] {
        std::fs::copy(other.path().join(f), mixed.path().join(f)).unwrap();
    }
    let message = connect_fails(&address(&fake, mixed.path(), None)).await;
    assert!(message.contains("client certificate"), "{message}");
}

#[tokio::test]
async fn a_gateway_signed_by_another_ca_is_refused_with_a_sentence() {
    let fake = FakeGateway::start().await.unwrap();
    let other = tempfile::tempdir().unwrap();
    write_certs(other.path(), &["localhost"]).unwrap();
    let message = connect_fails(&address(&fake, other.path(), None)).await;
    assert!(message.contains("not signed by ca.crt"), "{message}");
}

#[tokio::test]
async fn a_wrong_server_name_is_refused_with_a_sentence() {
    let fake = FakeGateway::start().await.unwrap();
    let message = connect_fails(&address(&fake, fake.cert_dir(), Some("openshell-gateway"))).await;
    assert!(message.contains("does not carry the name"), "{message}");
    // A name the certificate carries is taken.
    let ok = connect(&address(&fake, fake.cert_dir(), Some("openshell"))).await;
    assert!(ok.is_ok());
}

#[tokio::test]
async fn no_client_certificate_no_handshake() {
    let fake = FakeGateway::start().await.unwrap();
    let ca = std::fs::read(fake.cert_dir().join("ca.crt")).unwrap();
    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(ca))
        .domain_name("localhost");
    let endpoint = tonic::transport::Endpoint::from_shared(format!("https://{}", fake.address_string()))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect_timeout(Duration::from_secs(10));
    let answered = tokio::time::timeout(Duration::from_secs(60), async {
        let channel = endpoint.connect().await.map_err(|e| e.to_string())?;
        OpenShellClient::new(channel)
            .health(HealthRequest {})
            .await
            .map_err(|status| GatewayError::rpc("Health", &status).to_string())
    })
    .await
    .expect("no hang");
    let message = answered.expect_err("Health answered without a client certificate");
    assert!(message.contains("got none"), "{message}");
}

#[tokio::test]
async fn a_missing_certificate_file_is_named() {
    let fake = FakeGateway::start().await.unwrap();
    let empty = tempfile::tempdir().unwrap();
    let message = connect(&address(&fake, empty.path(), None)).await.err().unwrap().to_string();
    assert!(message.contains("ca.crt"), "{message}");
}

#[tokio::test]
async fn nothing_listening_is_a_sentence() {
    let fake = FakeGateway::start().await.unwrap();
    let to = GatewayAddress { address: "127.0.0.1:1".into(), cert_dir: fake.cert_dir().to_owned(), server_name: None };
    let message = connect(&to).await.err().unwrap().to_string();
    assert!(message.contains("nothing answers"), "{message}");
}

fn create(name: &str) -> CreateSandboxRequest {
    CreateSandboxRequest { name: name.into(), workspace_scope: workspace_scope(), ..Default::default() }
}

fn exec(sandbox: &str, command: &[&str]) -> ExecSandboxRequest {
    ExecSandboxRequest {
        sandbox: sandbox.into(),
        command: command.iter().map(|s| s.to_string()).collect(),
        workspace_scope: workspace_scope(),
        no_login_shell: true,
        request_id: uuid_like(),
        ..Default::default()
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!("req-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

async fn events(
    c: &mut OpenShellClient<Channel>,
    r: ExecSandboxRequest,
) -> Result<Vec<ExecSandboxEvent>, tonic::Status> {
    let mut stream = c.exec_sandbox(r).await?.into_inner();
    let mut out = Vec::new();
    while let Some(e) = stream.message().await? {
        out.push(e);
    }
    Ok(out)
}

async fn phase(c: &mut OpenShellClient<Channel>, name: &str) -> i32 {
    let r = GetSandboxRequest { name: name.into(), workspace_scope: workspace_scope() };
    c.get_sandbox(r).await.unwrap().into_inner().sandbox.unwrap().status.unwrap().phase
}

#[tokio::test]
async fn the_lifecycle_and_its_refusals() {
    let fake =
        FakeGateway::start_with(FakeOptions { provision: Duration::from_secs(2), ..Default::default() }).await.unwrap();
    let mut c = client(&fake).await;
    let created = c.create_sandbox(create("lens-chat-a1")).await.unwrap().into_inner();
    assert_eq!(created.sandbox.unwrap().status.unwrap().phase, SandboxPhase::Provisioning as i32);
    // Not ready yet: an exec is refused.
    let early = c.exec_sandbox(exec("lens-chat-a1", &["true"])).await.err().unwrap();
    assert_eq!(early.code(), tonic::Code::FailedPrecondition);
    // Twice: already exists.
    let again = c.create_sandbox(create("lens-chat-a1")).await.err().unwrap();
    assert_eq!(again.code(), tonic::Code::AlreadyExists);
    // No workspace scope: refused.
    let unscoped = CreateSandboxRequest { name: "lens-chat-a2".into(), ..Default::default() };
    let refused = c.create_sandbox(unscoped).await.err().unwrap();
    assert!(refused.message().contains("workspace_scope is required"));
    // Missing: not found.
    let missing = c
        .get_sandbox(GetSandboxRequest { name: "lens-chat-zz".into(), workspace_scope: workspace_scope() })
        .await
        .err()
        .unwrap();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while phase(&mut c, "lens-chat-a1").await != SandboxPhase::Ready as i32 {
        assert!(std::time::Instant::now() < deadline, "never ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Output, then exactly one exit, last.
    let out = events(&mut c, exec("lens-chat-a1", &["sh", "-c", "echo hi; echo oops >&2; exit 3"])).await.unwrap();
    let exits: Vec<i32> = out
        .iter()
        .filter_map(|e| match &e.payload {
            Some(Payload::Exit(x)) => Some(x.exit_code),
            _ => None,
        })
        .collect();
    assert_eq!(exits, [3]);
    assert!(matches!(out.last().unwrap().payload, Some(Payload::Exit(_))));
    let stdout: Vec<u8> = out
        .iter()
        .filter_map(|e| match &e.payload {
            Some(Payload::Stdout(o)) => Some(o.data.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(stdout, b"hi\n");
    // A timeout ends with 124.
    let mut slow = exec("lens-chat-a1", &["sleep", "30"]);
    slow.execution_timeout = Some(prost_types::Duration { seconds: 1, nanos: 0 });
    let out = events(&mut c, slow).await.unwrap();
    assert!(matches!(out.last().unwrap().payload, Some(Payload::Exit(ref x)) if x.exit_code == 124));
    // A request id is never run twice.
    let once = exec("lens-chat-a1", &["true"]);
    events(&mut c, once.clone()).await.unwrap();
    assert_eq!(events(&mut c, once).await.err().unwrap().code(), tonic::Code::AlreadyExists);
    // Delete answered "accepted" finishes later.
    fake.faults().delete_accepted.store(true, std::sync::atomic::Ordering::SeqCst);
    let del =
        DeleteSandboxRequest { name: "lens-chat-a1".into(), workspace_scope: workspace_scope(), ..Default::default() };
    let outcome = c.delete_sandbox(del.clone()).await.unwrap().into_inner().outcome;
    assert_eq!(outcome, DeletionOutcome::Accepted as i32);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !fake.sandboxes().is_empty() {
        assert!(std::time::Instant::now() < deadline, "never deleted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let gone = c.delete_sandbox(DeleteSandboxRequest { allow_missing: true, ..del }).await.unwrap().into_inner();
    assert_eq!(gone.outcome, DeletionOutcome::AlreadyAbsent as i32);
}

#[tokio::test]
async fn unavailable_and_dropped_streams() {
    let fake = FakeGateway::start().await.unwrap();
    let mut c = ready(&fake, "lens-chat-b1").await;
    let mut stream =
        c.exec_sandbox(exec("lens-chat-b1", &["sh", "-c", "echo started; sleep 60"])).await.unwrap().into_inner();
    let first = stream.message().await.unwrap().unwrap();
    assert!(matches!(first.payload, Some(Payload::Stdout(_))));
    fake.faults().drop_streams();
    let dropped = stream.message().await.expect_err("the stream ends with an error");
    assert_eq!(dropped.code(), tonic::Code::Unavailable);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while fake.running_commands() > 0 {
        assert!(std::time::Instant::now() < deadline, "the command outlived its stream");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    fake.faults().unavailable.store(true, std::sync::atomic::Ordering::SeqCst);
    let down = c.health(HealthRequest {}).await.err().unwrap();
    assert_eq!(down.code(), tonic::Code::Unavailable);
}

/// A ready sandbox named `name` on `fake`, and a client.
async fn ready(fake: &FakeGateway, name: &str) -> OpenShellClient<Channel> {
    ready_under(fake, name, None).await
}

/// [`ready`], the sandbox created with `policy` in its spec.
async fn ready_under(fake: &FakeGateway, name: &str, policy: Option<SandboxPolicy>) -> OpenShellClient<Channel> {
    let mut c = client(fake).await;
    let mut request = create(name);
    request.spec = policy.map(|policy| SandboxSpec { policy: Some(policy), ..Default::default() });
    c.create_sandbox(request).await.unwrap();
    wait_ready(&mut c, name).await;
    c
}

async fn wait_ready(c: &mut OpenShellClient<Channel>, name: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while phase(c, name).await != SandboxPhase::Ready as i32 {
        assert!(std::time::Instant::now() < deadline, "never ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn stdout_of(out: &[ExecSandboxEvent]) -> String {
    let bytes: Vec<u8> = out
        .iter()
        .filter_map(|e| match &e.payload {
            Some(Payload::Stdout(o)) => Some(o.data.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    String::from_utf8(bytes).unwrap()
}

#[tokio::test]
async fn arguments_environment_and_workdir_cross_the_sandboxs_shell_intact() {
    let fake = FakeGateway::start().await.unwrap();
    let mut c = ready(&fake, "lens-chat-q1").await;
    let hard = ["it's", "a \"b\" c", "$HOME `id` $(id)", "line\nnext", "", "*", "-n", "\\"];
    let mut argv = vec!["sh", "-c", "printf '[%s]' \"$@\"; printf '{%s}' \"$V\"; pwd", "sh"];
    argv.extend(hard);
    let mut r = exec("lens-chat-q1", &argv);
    r.environment.insert("V".into(), "it's $HOME \"q\" x y".into());
    events(&mut c, exec("lens-chat-q1", &["mkdir", "-p", "dir 'w' $x"])).await.unwrap();
    r.workdir = "/sandbox/dir 'w' $x".into();
    let out = stdout_of(&events(&mut c, r).await.unwrap());
    let expected_args: String = hard.iter().map(|a| format!("[{a}]")).collect();
    let (args, rest) = out.split_at(expected_args.len());
    assert_eq!(args, expected_args, "every argument as it was sent");
    assert!(rest.starts_with("{it's $HOME \"q\" x y}"), "the environment value as it was sent: {rest:?}");
    assert!(rest.trim_end().ends_with("/dir 'w' $x"), "the workdir: {rest:?}");
    // The gateway's refusals of what cannot become a command line.
    let mut bad_key = exec("lens-chat-q1", &["true"]);
    bad_key.environment.insert("NOT-A-NAME".into(), "1".into());
    assert_eq!(events(&mut c, bad_key).await.unwrap_err().code(), tonic::Code::InvalidArgument);
    let mut two_lines = exec("lens-chat-q1", &["true"]);
    two_lines.environment.insert("V".into(), "a\nb".into());
    let refused = events(&mut c, two_lines).await.unwrap_err();
    assert_eq!(refused.message(), "environment value for 'V' contains newline or carriage return characters");
    let nul = exec("lens-chat-q1", &["echo", "a\0b"]);
    let refused = events(&mut c, nul).await.unwrap_err();
    assert!(refused.message().contains("null bytes"), "{}", refused.message());
}

#[tokio::test]
async fn a_command_killed_by_a_signal_ends_its_stream_unavailable() {
    let fake = FakeGateway::start().await.unwrap();
    let mut c = ready(&fake, "lens-chat-k1").await;
    // The shell runs the command in its place: its death by a signal is no exit status.
    let killed = events(&mut c, exec("lens-chat-k1", &["sh", "-c", "echo before; kill -9 $$"])).await;
    let status = killed.expect_err("no exit event, an error");
    assert_eq!(status.code(), tonic::Code::Unavailable);
    assert!(status.message().contains("before the command reported an exit status"), "{}", status.message());
    // A shell that reports its child's death has an exit status: 128 + 9.
    let reported = events(&mut c, exec("lens-chat-k1", &["sh", "-c", "sh -c 'kill -9 $$'; exit $?"])).await.unwrap();
    assert!(matches!(reported.last().unwrap().payload, Some(Payload::Exit(ref x)) if x.exit_code == 137));
}

#[tokio::test]
async fn a_caller_without_the_user_role_is_refused_with_a_sentence() {
    let options = FakeOptions { client_role: None, ..Default::default() };
    let fake = FakeGateway::start_with(options).await.unwrap();
    // Authenticated (the CA signed it): Health, which needs no role, answers.
    let mut c = client(&fake).await;
    c.health(HealthRequest {}).await.expect("health needs no role");
    let refused = c.create_sandbox(create("lens-chat-r1")).await.expect_err("no role, no sandbox");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    let message = GatewayError::rpc("CreateSandbox", &refused).to_string();
    assert!(message.contains("role 'openshell-user' required") && message.contains("client/tls.crt"), "{message}");
    assert!(fake.sandboxes().is_empty());
    // The certificate generate-certs makes carries the role, and is taken.
    let with_role = FakeGateway::start().await.unwrap();
    client(&with_role).await.create_sandbox(create("lens-chat-r1")).await.expect("openshell-user may create");
}

#[tokio::test]
async fn lists_come_in_pages_and_a_nameless_create_is_named() {
    use lens_openshell::proto::openshell::v1::ListSandboxesRequest;
    let fake = FakeGateway::start_with(FakeOptions { max_page: 2, ..Default::default() }).await.unwrap();
    let mut c = client(&fake).await;
    let made = c.create_sandbox(create("")).await.expect("a create without a name is taken").into_inner();
    let name = made.sandbox.unwrap().metadata.unwrap().name;
    assert!(!name.is_empty() && name.len() <= 19, "named: {name}");
    for n in ["lens-chat-p1", "lens-chat-p2", "lens-chat-p3"] {
        c.create_sandbox(create(n)).await.unwrap();
    }
    let (mut seen, mut token, mut pages) = (Vec::new(), String::new(), 0);
    loop {
        let request =
            ListSandboxesRequest { page_token: token, workspace_scope: workspace_scope(), ..Default::default() };
        let page = c.list_sandboxes(request).await.unwrap().into_inner();
        assert!(page.sandboxes.len() <= 2, "at most the page's size");
        seen.extend(page.sandboxes.into_iter().map(|s| s.metadata.unwrap().name));
        pages += 1;
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(pages, 2);
    seen.sort();
    let mut all = vec![name, "lens-chat-p1".into(), "lens-chat-p2".into(), "lens-chat-p3".into()];
    all.sort();
    assert_eq!(seen, all, "each sandbox once");
}

#[tokio::test]
async fn resource_requests_are_refused_as_the_docker_driver_refuses_them() {
    use prost_types::{Struct, Value, value::Kind};
    let fake = FakeGateway::start().await.unwrap();
    let mut c = client(&fake).await;
    let amounts = |cpu: &str| Value {
        kind: Some(Kind::StructValue(Struct {
            fields: [("cpu".to_string(), Value { kind: Some(Kind::StringValue(cpu.into())) })].into_iter().collect(),
        })),
    };
    let with = |keys: &[&str]| {
        let mut r = create("lens-chat-r1");
        let fields = keys.iter().map(|k| (k.to_string(), amounts("500m"))).collect();
        r.spec = Some(SandboxSpec {
            template: Some(SandboxTemplate { resources: Some(Struct { fields }), ..Default::default() }),
            ..Default::default()
        });
        r
    };
    let refused = c.create_sandbox(with(&["limits", "requests"])).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert_eq!(refused.message(), "docker compute driver does not support resources.requests.cpu");
    c.create_sandbox(with(&["limits"])).await.expect("limits alone are taken");
}

#[tokio::test]
async fn an_interactive_execs_input_ending_ends_its_command_but_a_unary_execs_does_not() {
    let fake = FakeGateway::start().await.unwrap();
    let mut c = ready(&fake, "lens-chat-i1").await;
    // Unary, the input in the request: the command reads it, then EOF, and runs on.
    let mut r = exec("lens-chat-i1", &["sh", "-c", "cat; sleep 0.2; echo done"]);
    r.stdin = b"in;".to_vec();
    let out = events(&mut c, r).await.unwrap();
    assert_eq!(stdout_of(&out), "in;done\n");
    assert!(matches!(out.last().unwrap().payload, Some(Payload::Exit(ref x)) if x.exit_code == 0));
    // Interactive, its input half-closed: the gateway closes the command's channel.
    let start = exec("lens-chat-i1", &["sh", "-c", "cat; sleep 2; echo done"]);
    let frames = [
        ExecSandboxInput { payload: Some(exec_sandbox_input::Payload::Start(start)) },
        ExecSandboxInput { payload: Some(exec_sandbox_input::Payload::Stdin(b"in;".to_vec())) },
    ];
    let mut stream = c.exec_sandbox_interactive(tokio_stream::iter(frames)).await.unwrap().into_inner();
    let mut stdout = Vec::new();
    let ended = loop {
        match stream.message().await {
            Ok(Some(ExecSandboxEvent { payload: Some(Payload::Stdout(o)) })) => stdout.extend(o.data),
            Ok(Some(other)) => panic!("no exit event after the input ended: {other:?}"),
            Ok(None) => panic!("the stream ended without a status"),
            Err(status) => break status,
        }
    };
    assert_eq!(ended.code(), tonic::Code::Unavailable);
    assert!(!String::from_utf8_lossy(&stdout).contains("done"), "the command was ended: {stdout:?}");
}

/// A `CONNECT` through the sandbox's proxy: its status line.
async fn connect_through(proxy: std::net::SocketAddr, target: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(proxy).await.unwrap();
    s.write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).await.unwrap();
    String::from_utf8_lossy(&head).into_owned()
}

#[tokio::test]
async fn a_pushed_policy_decides_only_once_the_supervisors_next_poll_has_loaded_it() {
    use lens_openshell::proto::openshell::v1::UpdateConfigRequest;
    let fake = FakeGateway::start_with(FakeOptions { policy_poll: Duration::from_secs(2), ..Default::default() })
        .await
        .unwrap();
    let mut c = ready(&fake, "poll").await;
    let proxy = fake.proxy_address("poll").expect("an uncontained fake's proxy");
    let version = |s: Option<lens_openshell::proto::openshell::v1::Sandbox>| {
        s.and_then(|s| s.status).map(|s| s.current_policy_version).unwrap_or_default()
    };
    let get = || GetSandboxRequest { name: "poll".into(), workspace_scope: workspace_scope() };
    assert_eq!(version(c.get_sandbox(get()).await.unwrap().into_inner().sandbox), 1);
    assert_eq!(connect_through(proxy, "listed.invalid:443").await, "HTTP/1.1 403");
    let policy = letting_out("lens", vec![https("listed.invalid")]);
    let update = UpdateConfigRequest {
        sandbox: "poll".into(),
        policy: Some(policy),
        workspace_scope: workspace_scope(),
        ..Default::default()
    };
    let given = c.update_config(update).await.unwrap().into_inner().version;
    assert_eq!(given, 2);
    // Taken, not yet loaded: the old policy still decides.
    assert_eq!(version(c.get_sandbox(get()).await.unwrap().into_inner().sandbox), 1);
    assert_eq!(connect_through(proxy, "listed.invalid:443").await, "HTTP/1.1 403");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while version(c.get_sandbox(get()).await.unwrap().into_inner().sandbox) < given {
        assert!(std::time::Instant::now() < deadline, "never loaded");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Loaded: let out (the host does not resolve, so the proxy answers 502 after its decision).
    assert_ne!(connect_through(proxy, "listed.invalid:443").await, "HTTP/1.1 403");
}

/// An HTTPS host on loopback named `localhost`, with a certificate from an authority of
/// its own (`ca.crt` in its folder): answers every request `200` with its method and
/// path, and keeps what it was asked.
struct TlsHost {
    port: u16,
    dir: tempfile::TempDir,
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl TlsHost {
    async fn start() -> Self {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        use tokio_rustls::rustls::{
            ServerConfig,
            pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
        };
        let dir = tempfile::tempdir().unwrap();
        write_certs(dir.path(), &["localhost"]).unwrap();
        let chain = CertificateDer::pem_file_iter(dir.path().join("server/tls.crt")).unwrap().map(Result::unwrap);
        let key = PrivateKeyDer::from_pem_file(dir.path().join("server/tls.key")).unwrap();
        let config = ServerConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain.collect(), key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = asked.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, seen) = (acceptor.clone(), seen.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let (r, mut w) = tokio::io::split(tls);
                    let mut lines = BufReader::new(r).lines();
                    while let Ok(Some(first)) = lines.next_line().await {
                        while let Ok(Some(header)) = lines.next_line().await {
                            if header.is_empty() {
                                break;
                            }
                        }
                        let asked: Vec<&str> = first.split_whitespace().take(2).collect();
                        let body = asked.join(" ");
                        seen.lock().unwrap().push(body.clone());
                        let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
                        if w.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Self { port, dir, asked }
    }

    fn ca(&self) -> Vec<u8> {
        std::fs::read(self.dir.path().join("ca.crt")).unwrap()
    }
}

#[tokio::test]
async fn the_proxy_ends_tls_with_the_sandboxs_authority_and_its_read_only_rules_refuse_an_upload() {
    use lens_openshell::proto::openshell::{sandbox::v1::NetworkAccessPreset, v1::GetSandboxLogsRequest};
    let (host, untrusted) = (TlsHost::start().await, TlsHost::start().await);
    let options = FakeOptions { upstream_roots: host.ca(), ..Default::default() };
    let fake = FakeGateway::start_with(options).await.unwrap();
    let mut endpoint = NetworkEndpoint {
        host: "localhost".into(),
        ports: vec![u32::from(host.port), u32::from(untrusted.port)],
        protocol: "rest".into(),
        ..Default::default()
    };
    endpoint.set_access(NetworkAccessPreset::ReadOnly);
    let mut c = ready_under(&fake, "tls", Some(letting_out("registries", vec![endpoint]))).await;
    // A read, the certificate's issuer, then an upload on the same connection.
    let program = format!(
        "import http.client, os, ssl, urllib.parse\n\
         p = urllib.parse.urlparse(os.environ['HTTPS_PROXY'])\n\
         c = http.client.HTTPSConnection(p.hostname, p.port, context=ssl.create_default_context(), timeout=30)\n\
         c.set_tunnel('localhost', {port})\n\
         c.request('GET', '/simple/'); r = c.getresponse(); print(r.status, r.read().decode())\n\
         print(dict(x[0] for x in c.sock.getpeercert()['issuer'])['commonName'])\n\
         c.request('POST', '/simple/upload', body=b'wheel'); r = c.getresponse()\n\
         print(r.status, r.getheader('X-OpenShell-Policy'), 'policy_denied' in r.read().decode())\n",
        port = host.port
    );
    let out = stdout_of(&events(&mut c, exec("tls", &["python3", "-c", &program])).await.unwrap());
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["200 GET /simple/", "OpenShell Sandbox CA", "403 registries True"],
        "the read passes, the sandbox's authority signs, the upload is refused"
    );
    assert_eq!(*host.asked.lock().unwrap(), ["GET /simple/"], "the upload never reached the host");
    // A program that drops the sandbox's variables meets an authority it does not know.
    let dropped = format!("env -u SSL_CERT_FILE python3 -c \"{}\" 2>&1; true", program.replace('"', "\\\""));
    let out = stdout_of(&events(&mut c, exec("tls", &["sh", "-c", &dropped])).await.unwrap());
    assert!(out.contains("CERTIFICATE_VERIFY_FAILED"), "{out}");
    // A host the proxy cannot trust: the program's connection ends, the proxy logs it failed.
    let failing = program.replace(&host.port.to_string(), &untrusted.port.to_string());
    let out = stdout_of(
        &events(&mut c, exec("tls", &["sh", "-c", &format!("python3 -c \"{failing}\" 2>&1; true")])).await.unwrap(),
    );
    assert!(!out.contains("200 GET"), "{out}");
    assert!(untrusted.asked.lock().unwrap().is_empty());
    // The supervisor's lines, a push later.
    let (refusal, failure) = (
        format!(
            "HTTP:POST [MED] DENIED POST http://localhost:{0}/simple/upload [policy:registries engine:l7] \
             [reason:L7_REQUEST deny POST localhost:{0}/simple/upload reason=POST /simple/upload not permitted by policy]",
            host.port
        ),
        format!("NET:FAIL [LOW] localhost:{}", untrusted.port),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let logs =
            GetSandboxLogsRequest { sandbox: "tls".into(), workspace_scope: workspace_scope(), ..Default::default() };
        let lines: Vec<String> =
            c.get_sandbox_logs(logs).await.unwrap().into_inner().logs.into_iter().map(|l| l.message).collect();
        if lines.contains(&refusal) && lines.contains(&failure) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{lines:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_contained_sandbox_reaches_only_the_paths_its_filesystem_policy_lists() {
    use lens_openshell::proto::openshell::sandbox::v1::{FilesystemPolicy, LandlockPolicy};
    let fake = FakeGateway::start_with(FakeOptions { contain: true, ..Default::default() }).await.unwrap();
    let mut c = client(&fake).await;
    let policy = |read_write: &[&str]| SandboxPolicy {
        filesystem: Some(FilesystemPolicy {
            include_workdir: true,
            read_only: ["/usr", "/etc", "/lib", "/bin"].map(String::from).to_vec(),
            read_write: read_write.iter().map(|s| s.to_string()).collect(),
        }),
        landlock: Some(LandlockPolicy { compatibility: "hard_requirement".into() }),
        ..Default::default()
    };
    for (name, read_write) in [("bare", &["/sandbox", "/tmp"][..]), ("devnull", &["/sandbox", "/tmp", "/dev/null"])] {
        let mut request = create(name);
        request.spec = Some(SandboxSpec { policy: Some(policy(read_write)), ..Default::default() });
        c.create_sandbox(request).await.unwrap();
    }
    for name in ["bare", "devnull"] {
        wait_ready(&mut c, name).await;
    }
    let script = "for t in 'echo x > /dev/null' 'head -c1 /proc/self/status' 'echo x > /sandbox/w' 'cat /etc/hostname'; do \
                  if sh -c \"$t\" > /tmp/out 2>&1; then echo ok; else echo refused; fi; done";
    // Without /dev/null and /proc listed, neither can be used.
    let bare = stdout_of(&events(&mut c, exec("bare", &["bash", "-c", script])).await.unwrap());
    assert_eq!(bare.lines().collect::<Vec<_>>(), ["refused", "refused", "ok", "ok"], "{bare}");
    let listed = stdout_of(&events(&mut c, exec("devnull", &["bash", "-c", script])).await.unwrap());
    assert_eq!(listed.lines().collect::<Vec<_>>(), ["ok", "refused", "ok", "ok"], "{listed}");
}

#[tokio::test]
async fn policies_sent_are_revisions_beside_the_spec_and_an_unchanged_one_keeps_its_version() {
    use lens_openshell::proto::openshell::v1::UpdateConfigRequest;
    let listing = |host: &str| letting_out("lens", vec![https(host)]);
    let fake = FakeGateway::start().await.unwrap();
    let mut c = ready_under(&fake, "revs", Some(listing("a.example"))).await;
    let update = |policy: SandboxPolicy| UpdateConfigRequest {
        sandbox: "revs".into(),
        policy: Some(policy),
        workspace_scope: workspace_scope(),
        ..Default::default()
    };
    let given = c.update_config(update(listing("b.example"))).await.unwrap().into_inner().version;
    let again = c.update_config(update(listing("b.example"))).await.unwrap().into_inner().version;
    assert_eq!((given, again), (2, 2), "an unchanged policy is answered with its version");
    let get = GetSandboxRequest { name: "revs".into(), workspace_scope: workspace_scope() };
    let spec = c.get_sandbox(get).await.unwrap().into_inner().sandbox.unwrap().spec.unwrap();
    assert_eq!(spec.policy, Some(listing("a.example")), "the spec keeps the policy it was created with");
    assert_eq!(fake.policy("revs"), Some(listing("b.example")), "the newest revision");
}
