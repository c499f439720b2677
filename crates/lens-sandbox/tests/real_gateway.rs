//! The gateway driver on NVIDIA's real gateway and supervisor (podman, mutual TLS, the
//! test bridge), started by scripts/openshell/real-gateway: what the fake cannot show.
//! The supervisor's own seccomp filter, Landlock and CA; a sandbox killed from outside;
//! the gateway restarted mid-conversation. After each, the next run works. Elsewhere
//! these tests say they were not run, and pass.

use std::{sync::Arc, time::Duration};

use lens_sandbox::{AdmissionLimits, DriverSettings, Network, RunEnding, SandboxDriver};

mod common;

use common::bash;

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
