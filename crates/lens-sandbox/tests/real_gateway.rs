//! The gateway driver on NVIDIA's real gateway and supervisor (podman, mutual TLS, the
//! test bridge), started by scripts/openshell/real-gateway: what the fake cannot show.
//! The supervisor's own seccomp filter, Landlock and CA; HTTPS through its proxy to the
//! registries' stand-in (`pip install`, `npm install`, an upload refused by its L7
//! rules and recorded); a settings change reaching a live sandbox before its next run, given and
//! taken away, and a stopped one at its start; a sandbox killed from outside; the gateway
//! restarted mid-conversation. After each, the next run works. Elsewhere these tests say
//! they were not run, and pass.

use std::{sync::Arc, time::Duration};

use lens_sandbox::{AdmissionLimits, DriverSettings, Network, RunEnding, SandboxDriver, egress::Cidr};

mod common;

use common::{bash, reached, registry::Standin};

/// The name the gateway's sandboxes reach the host by.
const HOST: &str = "host.openshell.internal";

const T: Duration = Duration::from_secs(60);

fn settings(network: Option<Network>) -> DriverSettings {
    DriverSettings {
        limits: Default::default(),
        admission: AdmissionLimits { max_running: 4, max_memory_bytes: 64 << 30, wait: T, per_person: 4 },
        pool_size: 0,
        network,
    }
}

async fn driver(network: Option<Network>) -> Option<Arc<dyn SandboxDriver>> {
    common::real_gateway(&settings(network)).await
}

fn ok(out: &(String, String, RunEnding)) -> &str {
    assert_eq!(out.2, RunEnding::Exited { code: 0 }, "stdout {:?} stderr {:?}", out.0, out.1);
    &out.0
}

#[tokio::test]
async fn the_agents_seccomp_allow_list_stands_on_the_supervisors_filter() {
    let Some(d) = driver(None).await else { return };
    // The supervisor's two filters (and the engine's), then the agent's two: a run has them all.
    let filters = bash(&*d, "seccomp", "sed -n 's/^Seccomp_filters:\\s*//p' /proc/self/status", T).await;
    let filters: u32 = ok(&filters).trim().parse().unwrap();
    assert!(filters >= 4, "the agent's filters on top of the supervisor's: {filters}");
    // name_to_handle_at: allowed by the supervisor's deny-list, refused by the agent's
    // allow-list (EPERM), where the call alone would fail with EOVERFLOW.
    let probe = common::REFUSED_BY_THE_AGENT_ALONE;
    let refused = bash(&*d, "seccomp", &format!("python3 -c \"{probe}\""), T).await;
    assert_eq!(ok(&refused).trim(), "-1 Operation not permitted");
}

#[tokio::test]
async fn programs_that_discard_their_output_start_and_proc_and_urandom_are_there() {
    let Some(d) = driver(None).await else { return };
    let script = "true > /dev/null && ls /usr > /dev/null 2>&1 && head -c 16 /dev/urandom | wc -c \
                  && grep -c '^Name:' /proc/self/status";
    assert_eq!(ok(&bash(&*d, "devices", script, T).await), "16\n1\n");
}

fn hosts(names: &[&str]) -> Network {
    Network {
        policy: lens_sandbox::egress::EgressPolicy {
            hosts: names.iter().map(|s| s.to_string()).collect(),
            trusted: vec![],
        },
        env: lens_sandbox::registries::sandbox_env(&Default::default()),
        read_only: None,
    }
}

#[tokio::test]
async fn runs_and_the_python_kernel_trust_the_ca_the_sandbox_names_for_its_proxy() {
    let Some(d) = driver(Some(hosts(&["files.example.org"]))).await else { return };
    let script = "for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE NODE_EXTRA_CA_CERTS PIP_CERT; do \
                  f=$(printenv $v) && test -s \"$f\" && grep -q 'BEGIN CERTIFICATE' \"$f\" && echo \"$v=$f\"; done";
    let shown = bash(&*d, "ca", script, T).await;
    let lines: Vec<&str> = ok(&shown).lines().collect();
    assert_eq!(lines.len(), 5, "each names a CA bundle that is there: {lines:?}");
    assert!(lines.iter().all(|l| l.contains("openshell")), "the sandbox's own, not the system's: {lines:?}");
    let kernel = common::python(&*d, "ca", "import os; print(os.environ['SSL_CERT_FILE'])").await;
    assert_eq!(format!("SSL_CERT_FILE={}", ok(&kernel).trim()), lines[0]);
}

/// The sandbox's container, by its name on the gateway.
fn container(name: &str) -> String {
    let out = std::process::Command::new("podman")
        .args(["ps", "-q", "--filter", &format!("label=openshell.ai/sandbox-name={name}")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test]
async fn a_sandbox_killed_from_outside_is_started_again_by_the_next_run() {
    let Some(d) = driver(None).await else { return };
    ok(&bash(&*d, "killed", "echo kept > f", T).await);
    let id = container("lens-chat-killed");
    assert!(!id.is_empty(), "the sandbox runs in a container");
    let killed =
        std::process::Command::new("podman").args(["kill", &id]).stdout(std::process::Stdio::null()).status().unwrap();
    assert!(killed.success());
    // The gateway keeps such a sandbox in ERROR and will neither stop nor start it: the
    // next run has it made anew, and says that its files went with the container.
    let mut after = bash(&*d, "killed", "ls; echo back", T).await;
    if after.2 != (RunEnding::Exited { code: 0 }) {
        // Sent before the gateway's stream told of the death: it says the sandbox stopped.
        assert!(after.1.contains("[the sandbox stopped during this run]"), "{after:?}");
        after = bash(&*d, "killed", "ls; echo back", T).await;
    }
    assert_eq!(ok(&after), "back\n", "a fresh, empty workspace");
    assert!(after.1.contains("Files in /workspace are gone"), "the person is told: {:?}", after.1);
    let next = bash(&*d, "killed", "echo again", T).await;
    assert_eq!((ok(&next), next.1.as_str()), ("again\n", ""), "and the run after it is plain");
}

#[tokio::test]
async fn the_gateway_restarted_mid_conversation_and_the_next_run_works() {
    let Some(d) = driver(None).await else { return };
    ok(&common::python(&*d, "restart", "x = 41").await);
    let restart = std::env::var("LENS_TEST_OPENSHELL_RESTART").expect("the harness's restart command");
    assert!(std::process::Command::new(restart).status().unwrap().success());
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    loop {
        let req =
            lens_sandbox::ExecRequest { argv: vec!["echo".into(), "back".into()], env: Default::default(), timeout: T };
        if let Ok(stream) = d.exec("restart", req).await
            && let Ok(run) = lens_sandbox::run_to_end(stream).await
            && run.ending == (RunEnding::Exited { code: 0 })
        {
            assert_eq!(run.stdout_text(), "back\n");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no run worked after the gateway came back");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The registries' stand-in, on the address the gateway's sandboxes reach the host at,
/// with the certificate the sandbox image's authority signed; that address's range; and
/// the sandbox that found the address, kept while the stand-in listens (the sandboxes'
/// network, and the host's address on it, go with their last container).
async fn standin(tag: &str) -> (Standin, Cidr, Arc<dyn SandboxDriver>) {
    let probe = driver(None).await.expect("under the real gateway");
    let found = bash(&*probe, tag, &format!("getent hosts {HOST} | cut -d' ' -f1 | head -n 1"), T).await;
    let address = ok(&found).trim().to_owned();
    let certs = std::env::var("LENS_TEST_REGISTRY_CERTS").expect("the harness's registry certificate");
    let registry = Standin::start_at(std::path::Path::new(&certs), &address).await;
    (registry, Cidr::parse(&format!("{address}/32")).unwrap(), probe)
}

fn trust(registry: &Standin) -> lens_sandbox::read_only::UpstreamTrust {
    lens_sandbox::read_only::UpstreamTrust::from_pems(&[&registry.ca]).unwrap()
}

#[tokio::test]
async fn registries_over_https_install_with_pip_and_npm_and_an_upload_is_refused_and_recorded() {
    if driver(None).await.is_none() {
        return;
    }
    let (registry, range, _probe) = standin("regprobe").await;
    let network = registry.network_as(HOST, range, trust(&registry));
    let d = driver(Some(network)).await.unwrap();
    let pip = "python3 -m pip install --quiet --no-cache-dir demo-pkg && python3 -c 'import demo_pkg; print(demo_pkg.VERSION)'";
    assert_eq!(ok(&bash(&*d, "reg", pip, T).await).trim(), "1.0", "pip through the gateway's proxy");
    let npm = "mkdir -p app && cd app && npm install --no-audit --no-fund demo-npm@1.0.0 >/dev/null \
               && node -e \"console.log(require('demo-npm'))\"";
    assert_eq!(ok(&bash(&*d, "reg", npm, T).await).trim(), "demo-npm 1.0.0", "npm through the gateway's proxy");
    // An upload: refused by the proxy's read-only rules, never reaching the registry, and
    // in the run's record with the gateway's reason.
    let upload = format!(
        "curl -sS -o /dev/null -w '%{{http_code}}' -X POST --data x https://{HOST}:{}/simple/upload",
        registry.port
    );
    let record = reached(&*d, "reg", &upload).await.expect("a record");
    let refused = record.iter().find(|r| !r.allowed).unwrap_or_else(|| panic!("a refusal: {record:?}"));
    assert_eq!((refused.host.as_str(), refused.port), (HOST, registry.port), "{record:?}");
    assert!(refused.reason.starts_with("refused by the gateway: POST /simple/upload: "), "{refused:?}");
    assert!(!refused.allowable, "{refused:?}");
    assert!(registry.requests().iter().all(|r| !r.starts_with("POST")), "{:?}", registry.requests());
    assert_eq!(ok(&bash(&*d, "reg", "echo next", T).await), "next\n");
}

#[tokio::test]
async fn a_settings_change_reaches_a_live_sandbox_before_its_next_run_both_ways() {
    given_then_taken_away("change", false).await;
}

#[tokio::test]
async fn a_host_taken_away_while_the_sandbox_was_stopped_is_refused_once_it_starts_again() {
    given_then_taken_away("stopped", true).await;
}

/// The registries' stand-in, in hosts mode (named for its port: a registry URL's port is
/// listed), refused, given live and reached, then taken away (with the sandbox `stopped`
/// first, or live) and refused by the very next run, which then works.
async fn given_then_taken_away(chat: &str, stopped: bool) {
    if driver(None).await.is_none() {
        return;
    }
    // The probe's conversation as before, short: a sandbox's name has a length limit.
    let (registry, range, _probe) = standin(&format!("{}probe", &chat[..2])).await;
    let only = |names: &[&str]| {
        let mut network = registry.network_as(HOST, range, trust(&registry));
        network.policy.hosts = names.iter().map(|s| s.to_string()).collect();
        network.read_only = None;
        network
    };
    let d = driver(Some(only(&["files.example.org"]))).await.unwrap();
    let get = format!("curl -sS -o /dev/null -w '%{{http_code}}' https://{HOST}:{}/simple/demo-pkg/", registry.port);
    // Refused first (the supervisor drafts a rule for it, pending).
    let before = bash(&*d, chat, &get, T).await;
    assert_ne!(before.0, "200", "not listed yet: {before:?}");
    // Live: the very next run meets the change (it waits for the supervisor to load it).
    d.reconfigure(&settings(Some(only(&["files.example.org", HOST])))).await.unwrap();
    assert_eq!(ok(&bash(&*d, chat, &get, T).await), "200", "HTTPS through the proxy, its CA trusted");
    // Taken away, live or while stopped: the next run is refused again (a stopped sandbox
    // starts under the settings of now, not the newest policy the gateway holds).
    if stopped {
        d.stop(chat).await.unwrap();
    }
    d.reconfigure(&settings(Some(only(&["files.example.org"])))).await.unwrap();
    let after = reached(&*d, chat, &get).await.expect("a record");
    assert!(after.iter().all(|r| !r.allowed), "refused again (stopped between: {stopped}): {after:?}");
    assert_eq!(ok(&bash(&*d, chat, "echo next", T).await), "next\n");
}
