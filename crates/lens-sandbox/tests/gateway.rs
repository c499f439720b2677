//! What only the gateway driver does: the gateway's names, labels and policy, what a
//! run reached read back from the sandbox's log, and a
//! gateway that misbehaves (unavailable, a stream dropped mid-run, a slow create, a
//! delete answered "accepted", a certificate folder of another gateway). After each,
//! the next run in the same conversation works.

use std::{
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use lens_openshell::fake::{FakeGateway, FakeOptions};
use lens_sandbox::{
    AdmissionLimits, ChatNetwork, DriverSettings, GatewayAddress, GatewayOptions, Network, RunEnding, SandboxDriver,
    SandboxError, SandboxState,
    egress::{Cidr, EgressPolicy},
};

mod common;

use common::{agent, bash, reached, registry::Standin};

const T: Duration = Duration::from_secs(20);

fn settings(network: Option<Network>) -> DriverSettings {
    DriverSettings {
        limits: Default::default(),
        admission: AdmissionLimits { max_running: 8, max_memory_bytes: 64 << 30, wait: T, per_person: 8 },
        pool_size: 0,
        network,
    }
}

fn options(fake: &FakeGateway) -> GatewayOptions {
    let address =
        GatewayAddress { address: fake.address_string(), cert_dir: fake.cert_dir().to_owned(), server_name: None };
    GatewayOptions::new(address, agent())
}

async fn driver(network: Option<Network>) -> (Arc<dyn SandboxDriver>, FakeGateway) {
    let fake = FakeGateway::start().await.unwrap();
    let d = lens_sandbox::start_gateway(options(&fake), &settings(network)).unwrap();
    (d, fake)
}

fn hosts(names: &[&str]) -> Network {
    Network {
        policy: EgressPolicy {
            hosts: names.iter().map(|s| s.to_string()).collect(),
            trusted: vec![Cidr::parse("10.9.0.0/16").unwrap()],
        },
        env: vec![("PIP_USER".into(), "1".into()), ("HTTPS_PROXY".into(), "http://127.0.0.1:3128".into())],
        read_only: None,
    }
}

#[tokio::test]
async fn a_conversation_is_the_gateways_sandbox_lens_chat_id_with_its_labels_and_policy() {
    let (d, fake) = driver(None).await;
    d.ensure("abc").await.unwrap();
    let (spec, labels) = fake.created("lens-chat-abc").expect("made under its conversation's name");
    assert_eq!(labels.get("lens-chat").map(String::as_str), Some("abc"));
    assert_eq!(labels.get("app").map(String::as_str), Some("lens"));
    let policy = spec.policy.unwrap();
    assert!(policy.network_policies.is_empty(), "network off: nothing may leave");
    assert_eq!(policy.landlock.unwrap().compatibility, "hard_requirement");
    let resources = spec.template.unwrap().resources.unwrap();
    assert!(resources.fields.contains_key("limits"));
    assert_eq!(d.list().await.unwrap().iter().map(|s| s.chat_id.as_str()).collect::<Vec<_>>(), ["abc"]);
}

#[tokio::test]
async fn network_modes_become_the_gateways_policy_and_changes_reach_running_sandboxes() {
    let (d, fake) = driver(Some(hosts(&["files.example.org"]))).await;
    let (out, _, _) = bash(&*d, "net", "echo \"$PIP_USER/${HTTPS_PROXY:-none}\"", T).await;
    let theirs = fake.proxy_address("lens-chat-net").unwrap();
    assert_eq!(
        out,
        format!("1/http://{theirs}\n"),
        "the registries' settings and the sandbox's own proxy, never Lens's"
    );
    let rule = fake.policy("lens-chat-net").unwrap().network_policies.remove("lens").unwrap();
    assert_eq!(rule.endpoints[0].host, "files.example.org");
    assert_eq!(rule.endpoints[0].allowed_ips, ["10.9.0.0/16"]);
    // A new list reaches the running sandbox.
    d.configure(&settings(Some(hosts(&["pkgs.example.org", "files.example.org"]))));
    let mut listed = Vec::new();
    for _ in 0..400 {
        let policy = fake.policy("lens-chat-net").unwrap();
        listed = policy
            .network_policies
            .get("lens")
            .map(|r| r.endpoints.iter().map(|e| e.host.clone()).collect())
            .unwrap_or_default();
        if listed.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(listed, ["pkgs.example.org", "files.example.org"]);
    // A host the conversation's owner allowed reaches its running sandbox, in a rule of
    // its own; no other sandbox's.
    d.set_chat_network("net", ChatNetwork { hosts: vec!["data.example.org".into()], within: None });
    let mut theirs = Vec::new();
    for _ in 0..400 {
        let policy = fake.policy("lens-chat-net").unwrap();
        theirs = policy
            .network_policies
            .get("lens-conversation")
            .map(|r| r.endpoints.iter().map(|e| e.host.clone()).collect())
            .unwrap_or_default();
        if !theirs.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(theirs, ["data.example.org"]);
    bash(&*d, "other", "true", T).await;
    assert!(!fake.policy("lens-chat-other").unwrap().network_policies.contains_key("lens-conversation"));
    // A sandbox started afresh has it from its start.
    d.delete("net").await.unwrap();
    bash(&*d, "net", "true", T).await;
    let (spec, _) = fake.created("lens-chat-net").unwrap();
    assert!(spec.policy.unwrap().network_policies.contains_key("lens-conversation"));
    // Its owner's groups narrow it to part of the site's list: that part only, and none
    // of the hosts they allowed; in force once the call before a run returns.
    let within = Some((vec!["pkgs.example.org".to_owned()], "your group may reach less".to_owned()));
    d.set_chat_network_for_run("net", ChatNetwork { hosts: vec!["data.example.org".into()], within }).await;
    let policy = fake.policy("lens-chat-net").unwrap();
    let hosts: Vec<String> =
        policy.network_policies.get("lens").map(|r| r.endpoints.iter().map(|e| e.host.clone()).collect()).unwrap();
    assert_eq!(hosts, ["pkgs.example.org"]);
    assert!(!policy.network_policies.contains_key("lens-conversation"));
    // Off: nothing.
    d.configure(&settings(None));
    for _ in 0..400 {
        if fake.policy("lens-chat-net").unwrap().network_policies.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the network was not turned off on the running sandbox");
}

#[tokio::test]
async fn each_run_carries_what_the_gateways_proxy_decided_for_it_read_from_the_sandboxs_log() {
    let (d, _fake) = driver(Some(hosts(&["allowed.invalid"]))).await;
    // Through the sandbox's proxy: one listed host (twice; it does not resolve, so the
    // proxy lets it out and then cannot reach it), one host on no list.
    let script = "for u in https://allowed.invalid/ https://allowed.invalid/a https://refused.invalid/; do \
                  curl -sS -m 10 -o /dev/null \"$u\" 2>&1 | head -c 200; echo; done";
    let record = reached(&*d, "seen", script).await.expect("a record");
    let allowed = record.iter().find(|r| r.allowed).expect("the listed host");
    assert_eq!((allowed.host.as_str(), allowed.port, allowed.connections), ("allowed.invalid", 443, 2), "{record:?}");
    assert_eq!(allowed.reason, "allowed by the gateway's policy (lens)");
    assert_eq!((allowed.bytes_sent, allowed.bytes_received), (None, None), "the gateway counts no bytes");
    let refused = record.iter().find(|r| !r.allowed).expect("the refused host");
    assert_eq!(refused.host, "refused.invalid");
    assert_eq!(refused.reason, "refused by the gateway: endpoint refused.invalid:443 is not allowed by any policy");
    assert!(refused.allowable, "on no list: a person may allow it where the admin lets them");
    assert_eq!(record.len(), 2, "{record:?}");
    // The next run carries only its own.
    assert_eq!(reached(&*d, "seen", "echo quiet").await, None);
    let again = reached(&*d, "seen", "curl -sS -m 10 https://refused.invalid/ 2>&1 | head -c 200").await.unwrap();
    assert_eq!((again.len(), again[0].connections), (1, 1), "{again:?}");
    // Without a network nothing is read (and nothing could leave).
    let (off, _fake) = driver(None).await;
    assert_eq!(reached(&*off, "dark", "curl -sS -m 10 https://refused.invalid/ 2>&1 | head -c 200").await, None);
}

#[tokio::test]
async fn a_stream_dropped_mid_run_ends_the_run_and_the_next_run_works() {
    let (d, fake) = driver(None).await;
    common::bash(&*d, "drop", "echo kept > f", T).await;
    let req = lens_sandbox::ExecRequest {
        argv: vec!["sh".into(), "-c".into(), "echo begun; sleep 30".into()],
        env: Default::default(),
        timeout: T,
    };
    let mut stream = d.exec("drop", req).await.unwrap();
    use futures_util::StreamExt;
    assert!(matches!(stream.next().await, Some(lens_sandbox::RunEvent::Output { .. })));
    fake.faults().drop_streams();
    let run = tokio::time::timeout(Duration::from_secs(60), lens_sandbox::run_to_end(stream))
        .await
        .expect("the run ends, it does not hang")
        .unwrap();
    assert!(run.stderr_text().contains("the sandbox stopped during this run"), "{}", run.stderr_text());
    assert!(matches!(run.ending, RunEnding::Killed { .. }), "{:?}", run.ending);
    let (out, err, ending) = bash(&*d, "drop", "cat f", T).await;
    assert_eq!((out.as_str(), ending), ("kept\n", RunEnding::Exited { code: 0 }));
    assert!(err.contains("Lens restarted this conversation's sandbox"), "the person is told: {err}");
}

#[tokio::test]
async fn an_agent_killed_by_a_signal_ends_the_run_with_an_ending_and_the_next_run_works() {
    let (d, fake) = driver(None).await;
    common::bash(&*d, "sig", "echo kept > f", T).await;
    let req = lens_sandbox::ExecRequest {
        argv: vec!["sh".into(), "-c".into(), "echo begun; sleep 30".into()],
        env: Default::default(),
        timeout: T,
    };
    let mut stream = d.exec("sig", req).await.unwrap();
    use futures_util::StreamExt;
    assert!(matches!(stream.next().await, Some(lens_sandbox::RunEvent::Output { .. })));
    // The agent dies by SIGKILL: the gateway ends its exec stream UNAVAILABLE, with no exit status.
    fake.kill_commands("lens-chat-sig");
    let run = tokio::time::timeout(Duration::from_secs(60), lens_sandbox::run_to_end(stream))
        .await
        .expect("the run ends, it does not hang")
        .expect("a run's ending, not a transport error");
    assert!(matches!(run.ending, RunEnding::Killed { .. }), "{:?}", run.ending);
    assert!(run.stderr_text().contains("the sandbox stopped during this run"), "{}", run.stderr_text());
    let (out, _, ending) = bash(&*d, "sig", "cat f", T).await;
    assert_eq!((out.as_str(), ending), ("kept\n", RunEnding::Exited { code: 0 }));
}

#[tokio::test]
async fn an_unavailable_gateway_is_a_clear_error_and_the_next_run_works_once_it_is_back() {
    let (d, fake) = driver(None).await;
    bash(&*d, "down", "true", T).await;
    d.stop("down").await.unwrap();
    fake.faults().unavailable.store(true, Ordering::SeqCst);
    let refused = tokio::time::timeout(Duration::from_secs(60), d.ensure("down")).await.expect("no hang");
    assert!(matches!(&refused, Err(SandboxError::Unavailable(m)) if m.contains("unavailable")), "{refused:?}");
    fake.faults().unavailable.store(false, Ordering::SeqCst);
    let (out, _, _) = bash(&*d, "down", "echo back", T).await;
    assert_eq!(out, "back\n");
}

#[tokio::test]
async fn a_slow_create_is_waited_for() {
    let (d, fake) = driver(None).await;
    fake.faults().slow_create_ms.store(2_500, Ordering::SeqCst);
    let (out, _, _) = bash(&*d, "slow", "echo ready", Duration::from_secs(20)).await;
    assert_eq!(out, "ready\n");
}

#[tokio::test]
async fn a_delete_answered_accepted_then_a_new_run_gets_a_fresh_sandbox() {
    let (d, fake) = driver(None).await;
    bash(&*d, "gone", "echo old > f", T).await;
    fake.faults().delete_accepted.store(true, Ordering::SeqCst);
    d.delete("gone").await.unwrap();
    assert_eq!(d.status("gone").await.unwrap().state, SandboxState::Absent, "deleting counts as gone");
    let (out, _, ending) = bash(&*d, "gone", "ls; echo new", T).await;
    assert_eq!((out.as_str(), ending), ("new\n", RunEnding::Exited { code: 0 }), "a fresh workspace");
}

#[tokio::test]
async fn the_agent_is_delivered_once_per_sandbox() {
    let (d, fake) = driver(None).await;
    bash(&*d, "once", "true", T).await;
    let first = fake.execs();
    d.stop("once").await.unwrap();
    bash(&*d, "once", "true", T).await;
    // The first start: the home readied, the agent delivered in parts of at most 768 KiB
    // (each a command's whole input) and moved in place, the agent; a restart: no delivery.
    let parts = std::fs::metadata(agent()).unwrap().len().div_ceil(768 * 1024);
    assert_eq!((first, fake.execs() - first), (parts + 3, 2));
}

#[tokio::test]
async fn a_large_file_goes_in_and_out_in_frames_under_the_message_limit() {
    let (d, _fake) = driver(None).await;
    let data: Vec<u8> = (0..25u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    d.put_file("big", "data.bin", data.clone()).await.unwrap();
    let (out, _, _) = bash(&*d, "big", "wc -c < data.bin", T).await;
    assert_eq!(out.trim(), (25u32 << 20).to_string());
    assert_eq!(d.get_file("big", "data.bin", 30 << 20).await.unwrap(), data);
}

#[tokio::test]
async fn another_gateways_certificates_are_refused_with_a_sentence_not_a_hang() {
    let fake = FakeGateway::start().await.unwrap();
    let other = tempfile::tempdir().unwrap();
    lens_openshell::fake::write_certs(other.path(), &["localhost"]).unwrap();
    let mut options = options(&fake);
    options.gateway.cert_dir = other.path().to_owned();
    let d = lens_sandbox::start_gateway(options.clone(), &settings(None)).unwrap();
    let refused = tokio::time::timeout(Duration::from_secs(60), d.ensure("x")).await.expect("no hang");
    assert!(matches!(&refused, Err(SandboxError::Unavailable(m)) if m.contains("not signed by ca.crt")), "{refused:?}");
    let checked = lens_sandbox::check_gateway(&options).await;
    assert!(matches!(&checked, Err(SandboxError::Unavailable(m)) if m.contains("not signed by ca.crt")), "{checked:?}");
}

#[tokio::test]
async fn a_certificate_without_the_gateways_user_role_is_refused_with_a_sentence() {
    let no_role = lens_openshell::fake::FakeOptions { client_role: None, ..Default::default() };
    let fake = FakeGateway::start_with(no_role).await.unwrap();
    let checked = tokio::time::timeout(Duration::from_secs(60), lens_sandbox::check_gateway(&options(&fake)))
        .await
        .expect("no hang");
    let message = format!("{:?}", checked.expect_err("refused"));
    assert!(message.contains("role 'openshell-user' required") && message.contains("client/tls.crt"), "{message}");
}

#[tokio::test]
async fn a_check_reports_the_version_and_leaves_no_sandbox() {
    let fake = FakeGateway::start().await.unwrap();
    let check = lens_sandbox::check_gateway(&options(&fake)).await.unwrap();
    assert_eq!(check.version, "0.1.4");
    assert!(fake.execs() >= 2, "a test sandbox ran");
    assert!(fake.sandboxes().is_empty(), "and was deleted: {:?}", fake.sandboxes());
}

#[tokio::test]
async fn a_restarted_server_remembers_when_each_sandbox_was_last_used() {
    let fake = FakeGateway::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gateway-last-used.json");
    let mut opts = options(&fake);
    opts.last_used_file = Some(file.clone());
    let first = lens_sandbox::start_gateway(opts.clone(), &settings(None)).unwrap();
    for chat in ["old", "recent"] {
        bash(&*first, chat, "echo hi > f", T).await;
    }
    first.shutdown().await;
    // The record as a server would have left it after "old" went unused for 15 days.
    let mut record: std::collections::HashMap<String, u64> =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    *record.get_mut("lens-chat-old").unwrap() -= 15 * 86_400;
    std::fs::write(&file, serde_json::to_vec(&record).unwrap()).unwrap();
    let second = lens_sandbox::start_gateway(opts, &settings(None)).unwrap();
    let (old, recent) = (second.status("old").await.unwrap(), second.status("recent").await.unwrap());
    assert_eq!((old.state, recent.state), (SandboxState::Stopped, SandboxState::Stopped));
    assert!(old.idle_secs >= 15 * 86_400, "{old:?}");
    assert!(recent.idle_secs < 3_600, "used minutes ago, whenever it was made: {recent:?}");
}

#[tokio::test]
async fn every_sandbox_is_listed_when_the_gateway_gives_them_in_pages() {
    let paged = lens_openshell::fake::FakeOptions { max_page: 2, ..Default::default() };
    let fake = FakeGateway::start_with(paged).await.unwrap();
    let d = lens_sandbox::start_gateway(options(&fake), &settings(None)).unwrap();
    for chat in ["p1", "p2", "p3", "p4", "p5"] {
        bash(&*d, chat, "true", T).await;
    }
    let mut listed: Vec<String> = d.list().await.unwrap().into_iter().map(|s| s.chat_id).collect();
    listed.sort();
    assert_eq!(listed, ["p1", "p2", "p3", "p4", "p5"], "three pages of two, each sandbox once");
}

#[tokio::test]
async fn a_sandbox_stopped_to_make_room_does_not_keep_the_next_one_waiting_on_its_stop() {
    let fake = FakeGateway::start().await.unwrap();
    let mut one_room = settings(None);
    one_room.admission.max_running = 1;
    let d = lens_sandbox::start_gateway(options(&fake), &one_room).unwrap();
    bash(&*d, "first", "true", T).await;
    // As the Docker driver's stop, which waits for its container's stop timeout.
    fake.faults().slow_stop_ms.store(60_000, Ordering::SeqCst);
    let (out, _, _) = bash(&*d, "second", "echo in", T).await;
    assert_eq!(out, "in\n");
    assert_eq!(fake.faults().stopping.load(Ordering::SeqCst), 1, "the first is still being stopped, in the background");
}

#[tokio::test]
async fn a_sandbox_whose_container_was_killed_from_outside_is_made_anew_and_the_person_told_its_files_went() {
    let (d, fake) = driver(None).await;
    bash(&*d, "dead", "echo kept > f", T).await;
    // As `docker kill` does on the real gateway: ERROR, and no stop or start takes it back.
    fake.kill_container("lens-chat-dead");
    let mut after = bash(&*d, "dead", "ls; echo back", T).await;
    if after.2 != (RunEnding::Exited { code: 0 }) {
        assert!(after.1.contains("[the sandbox stopped during this run]"), "{after:?}");
        after = bash(&*d, "dead", "ls; echo back", T).await;
    }
    assert_eq!((after.0.as_str(), after.2), ("back\n", RunEnding::Exited { code: 0 }), "a fresh workspace");
    assert!(after.1.contains("Files in /workspace are gone"), "the person is told: {:?}", after.1);
    let (out, err, _) = bash(&*d, "dead", "echo again", T).await;
    assert_eq!((out.as_str(), err.as_str()), ("again\n", ""));
}

#[tokio::test]
async fn a_sandbox_stopped_while_the_network_changed_starts_again_under_the_new_policy() {
    let (d, fake) = driver(Some(hosts(&["one.example.org"]))).await;
    bash(&*d, "later", "true", T).await;
    d.stop("later").await.unwrap();
    // Lens started again with other settings while the sandbox was stopped: nothing was
    // sent to it, and the gateway starts it with the policy it had.
    let again = lens_sandbox::start_gateway(options(&fake), &settings(Some(hosts(&["two.example.org"])))).unwrap();
    bash(&*again, "later", "true", T).await;
    let policy = fake.policy("lens-chat-later").unwrap();
    let listed: Vec<&str> = policy.network_policies["lens"].endpoints.iter().map(|e| e.host.as_str()).collect();
    assert_eq!(listed, ["two.example.org"], "the policy at the sandbox's new start");
}

#[tokio::test]
async fn a_run_right_after_a_settings_change_waits_for_its_sandbox_to_load_it_and_meets_it() {
    // The supervisor loads a pushed policy only at its next poll: here five seconds on.
    let options_ = FakeOptions { policy_poll: Duration::from_secs(5), ..Default::default() };
    let fake = FakeGateway::start_with(options_).await.unwrap();
    let d = lens_sandbox::start_gateway(options(&fake), &settings(Some(hosts(&["old.invalid"])))).unwrap();
    let curl = "curl -sS -m 10 -o /dev/null https://new.invalid/ 2>&1 | head -c 200";
    let before = reached(&*d, "change", curl).await.expect("a record");
    assert!(!before[0].allowed, "{before:?}");
    d.configure(&settings(Some(hosts(&["new.invalid"]))));
    // Sent: the gateway holds it at once; the sandbox's supervisor has not loaded it.
    for _ in 0..400 {
        let policy = fake.policy("lens-chat-change").unwrap();
        if policy.network_policies["lens"].endpoints[0].host == "new.invalid" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let run = {
        let d = d.clone();
        tokio::spawn(async move { reached(&*d, "change", curl).await })
    };
    let mut told = false;
    for _ in 0..400 {
        told = d.settling("change").await;
        if told || run.is_finished() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(told, "the run says it waits for the new settings");
    let after = run.await.unwrap().expect("a record");
    assert!(after[0].allowed && after[0].host == "new.invalid", "the run met the change: {after:?}");
    assert!(!d.settling("change").await);
    // Nothing new sent: the next run does not wait.
    assert_eq!(bash(&*d, "change", "echo ok", T).await.0, "ok\n");
}

#[tokio::test]
async fn a_network_change_the_gateway_refuses_is_an_error_and_the_old_settings_stay() {
    let (d, fake) = driver(Some(hosts(&["old.invalid"]))).await;
    bash(&*d, "keep", "true", T).await;
    fake.faults().refuse_policy.store(true, Ordering::SeqCst);
    let refused = d.reconfigure(&settings(Some(hosts(&["new.invalid"])))).await.unwrap_err();
    assert!(refused.to_string().contains("refused the new network policy"), "{refused}");
    assert!(refused.to_string().contains("unsafe content"), "the gateway's reason: {refused}");
    fake.faults().refuse_policy.store(false, Ordering::SeqCst);
    let listed = |name: &str| -> Vec<String> {
        let policy = fake.policy(name).unwrap();
        policy.network_policies["lens"].endpoints.iter().map(|e| e.host.clone()).collect()
    };
    assert_eq!(listed("lens-chat-keep"), ["old.invalid"]);
    // A sandbox made after the refusal is made under the old settings.
    bash(&*d, "fresh", "true", T).await;
    assert_eq!(listed("lens-chat-fresh"), ["old.invalid"], "the driver kept the old settings");
    // Taken once the gateway takes it, before the answer.
    d.reconfigure(&settings(Some(hosts(&["new.invalid"])))).await.unwrap();
    assert_eq!(listed("lens-chat-keep"), ["new.invalid"]);
    assert_eq!(bash(&*d, "keep", "echo ok", T).await.0, "ok\n");
}

#[tokio::test]
async fn under_a_supervisor_that_refuses_seccomp2_the_agent_adds_its_allow_list_all_the_same() {
    // Contained, the fake's sandboxes have a filter in force that refuses further filters
    // through seccomp(2), as NVIDIA's supervisor's does.
    let fake = FakeGateway::start_with(lens_openshell::fake::FakeOptions { contain: true, ..Default::default() })
        .await
        .unwrap();
    let d = lens_sandbox::start_gateway(options(&fake), &settings(None)).unwrap();
    let (out, err, ending) = bash(&*d, "sec", "sed -n 's/^Seccomp_filters:\\s*//p' /proc/self/status", T).await;
    assert_eq!(ending, RunEnding::Exited { code: 0 }, "{err}");
    let filters: u32 = out.trim().parse().unwrap();
    assert!(filters >= 3, "the sandbox's filter and the agent's two: {filters}");
    // A call the agent's allow-list refuses and the sandbox's filter lets through.
    let probe = common::REFUSED_BY_THE_AGENT_ALONE;
    let (out, _, _) = bash(&*d, "sec", &format!("python3 -c \"{probe}\""), T).await;
    assert_eq!(out.trim(), "-1 Operation not permitted");
}

#[tokio::test]
async fn registries_over_https_through_the_gateways_proxy_install_and_an_upload_is_refused_and_recorded() {
    // The proxy ends TLS with the sandbox's own authority, as the gateway's does: pip and
    // npm get through only because the driver keeps the variables that name it.
    let registry = Standin::start(0).await;
    let fake = FakeGateway::start_with(FakeOptions { upstream_roots: registry.ca.clone(), ..Default::default() })
        .await
        .unwrap();
    let trust = lens_sandbox::read_only::UpstreamTrust::from_pems(&[&registry.ca]).unwrap();
    let d = lens_sandbox::start_gateway(options(&fake), &settings(Some(registry.network(trust)))).unwrap();
    // Into the workspace: the uncontained fake runs on this machine, whose Python is not ours.
    let pip = "PIP_USER=0 python3 -m pip install --quiet --no-cache-dir --break-system-packages --target pkgs demo-pkg \
               && PYTHONPATH=pkgs python3 -c 'import demo_pkg; print(demo_pkg.VERSION)'";
    let (out, err, ending) = bash(&*d, "reg", pip, T).await;
    assert_eq!((out.trim(), ending), ("1.0", RunEnding::Exited { code: 0 }), "pip through the proxy: {err}");
    let npm = "mkdir -p app && cd app && npm install --no-audit --no-fund demo-npm@1.0.0 >/dev/null \
               && node -e \"console.log(require('demo-npm'))\"";
    let (out, err, _) = bash(&*d, "reg", npm, T).await;
    assert_eq!(out.trim(), "demo-npm 1.0.0", "npm through the proxy: {err}");
    let upload = format!(
        "curl -sS -o /dev/null -w '%{{http_code}}' -X POST --data x https://localhost:{}/simple/upload",
        registry.port
    );
    let record = reached(&*d, "reg", &upload).await.expect("a record");
    let refused = record.iter().find(|r| !r.allowed).unwrap_or_else(|| panic!("a refusal: {record:?}"));
    assert_eq!((refused.host.as_str(), refused.port), ("localhost", registry.port), "{record:?}");
    assert_eq!(
        refused.reason,
        "refused by the gateway: POST /simple/upload: L7_REQUEST deny POST localhost:{}/simple/upload \
         reason=POST /simple/upload not permitted by policy"
            .replace("{}", &registry.port.to_string())
    );
    assert!(!refused.allowable, "{refused:?}");
    assert!(registry.requests().iter().all(|r| !r.starts_with("POST")), "{:?}", registry.requests());
    assert_eq!(bash(&*d, "reg", "echo next", T).await.0, "next\n");
}

#[tokio::test]
async fn a_host_given_live_then_taken_away_while_stopped_is_refused_once_the_sandbox_starts_again() {
    // The gateway keeps a sandbox's policies as revisions beside the spec, which holds
    // the one it was created with: settings back to that one still have to be sent.
    let (d, fake) = driver(Some(hosts(&["one.example.org"]))).await;
    let curl = "curl -sS -m 10 -o /dev/null https://two.invalid/ 2>&1 | head -c 200";
    bash(&*d, "revisions", "true", T).await;
    d.reconfigure(&settings(Some(hosts(&["one.example.org", "two.invalid"])))).await.unwrap();
    let given = reached(&*d, "revisions", curl).await.expect("a record");
    assert!(given[0].allowed, "given live: {given:?}");
    d.stop("revisions").await.unwrap();
    d.reconfigure(&settings(Some(hosts(&["one.example.org"])))).await.unwrap();
    let taken = reached(&*d, "revisions", curl).await.expect("a record");
    assert!(taken.iter().all(|r| !r.allowed), "taken away while stopped: {taken:?}");
    let held = fake.policy("lens-chat-revisions").unwrap();
    let listed: Vec<&str> = held.network_policies["lens"].endpoints.iter().map(|e| e.host.as_str()).collect();
    assert_eq!(listed, ["one.example.org"], "the gateway's newest revision");
}
