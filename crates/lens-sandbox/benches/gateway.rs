//! The gateway driver's figures against the fake gateway over real mutual TLS on
//! loopback, each next to the local driver measured in the same run:
//!
//! - first run in a new conversation (`run_python("print(1)")`): sandbox made, agent
//!   delivered and started, kernel started; target: at most 2x local;
//! - a warm `run_python` (`print(1)`): target: the gateway adds at most 5 ms p50;
//! - the same with a network on, where each run's record is read back from the sandbox's
//!   log a settling second after the run, after its ending: target: the ending comes at
//!   most 50 ms later than with no network;
//! - 100 conversations x 5 runs at once: failures (target 0), p50/p99, wall time;
//! - a 25 MB file out of the workspace (`get_file`).
//!
//! The fake provisions at once; as root it runs each sandbox's commands in a container
//! of its own (a cgroup, bubblewrap around each exec, as a gateway's `docker exec`
//! would), otherwise as plain processes on this machine, which the agent then shares
//! with every other process here (its sweep of leftovers reads all of them). Either way
//! the figures are the driver's and the protocol's own costs (TLS, HTTP/2, frames
//! through exec streams), not a real gateway's container start.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-sandbox --bench gateway`
//! (`make bench` does both). Under `scripts/openshell/real-gateway` the same bench measures
//! NVIDIA's real gateway instead (`mod real`).

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use lens_openshell::fake::{FakeGateway, FakeOptions};
use lens_sandbox::{
    AdmissionLimits, DriverSettings, ExecRequest, GatewayAddress, GatewayOptions, LocalDriver, LocalOptions, Network,
    RunEnding, SandboxDriver, egress::EgressPolicy, run_to_end,
};

const ROUNDS: usize = 20;
const CONVERSATIONS: usize = 100;
const RUNS_EACH: usize = 5;
const FILE_BYTES: usize = 25 << 20;

fn agent() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let agent = exe.parent().and_then(|d| d.parent()).unwrap().join("lens-sandbox-agent");
    assert!(agent.is_file(), "build it first: cargo build --release -p lens-sandbox-agent");
    agent
}

/// A network on, reaching one host.
fn files_example() -> Network {
    Network {
        policy: EgressPolicy { hosts: vec!["files.example.org".into()], trusted: Vec::new() },
        env: Vec::new(),
        read_only: None,
    }
}

fn pct(mut v: Vec<f64>, p: usize) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() * p / 100).min(v.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn print_one(d: &dyn SandboxDriver, chat: &str) -> f64 {
    let start = Instant::now();
    let run = run_to_end(d.run_python(chat, "print(1)", Duration::from_secs(60)).await.unwrap()).await.unwrap();
    assert_eq!((run.stdout.as_slice(), run.ending), (&b"1\n"[..], RunEnding::Exited { code: 0 }));
    ms(start.elapsed())
}

async fn first_runs(d: &dyn SandboxDriver, tag: &str) -> f64 {
    let mut times = Vec::new();
    for i in 0..ROUNDS {
        let chat = format!("{tag}{i}");
        times.push(print_one(d, &chat).await);
        d.delete(&chat).await.unwrap();
    }
    pct(times, 50)
}

async fn warm_runs(d: &dyn SandboxDriver, chat: &str) -> f64 {
    print_one(d, chat).await;
    let mut times = Vec::new();
    for _ in 0..ROUNDS * 3 {
        times.push(print_one(d, chat).await);
    }
    d.delete(chat).await.unwrap();
    pct(times, 50)
}

/// (failures, p50, p99, wall seconds)
/// A networked run's ending next to the same run with no network, against its target.
fn networked_line(on: f64, off: f64, decimals: usize) -> String {
    format!(
        "  warm run_python, network on      gateway {on:>8.decimals$} ms   network off {off:>8.decimals$} ms  (its ending \
         adds {:.decimals$} ms; target <= 50 ms: {})",
        on - off,
        if on - off <= 50.0 { "met" } else { "NOT met" }
    )
}

async fn many_at_once(d: Arc<dyn SandboxDriver>, tag: &str) -> (usize, f64, f64, f64) {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..CONVERSATIONS {
        let (d, chat) = (d.clone(), format!("{tag}{c}"));
        tasks.push(tokio::spawn(async move {
            let (mut times, mut failures) = (Vec::new(), 0);
            for _ in 0..RUNS_EACH {
                let start = Instant::now();
                let ok = match d.run_python(&chat, "print(1)", Duration::from_secs(120)).await {
                    Ok(run) => match run_to_end(run).await {
                        Ok(r) if r.stdout == b"1\n" => true,
                        Ok(r) => {
                            eprintln!("    a failed run: {:?} {}", r.ending, r.stderr_text().trim());
                            false
                        }
                        Err(e) => {
                            eprintln!("    a run did not start: {e}");
                            false
                        }
                    },
                    Err(e) => {
                        eprintln!("    a run was refused: {e}");
                        false
                    }
                };
                times.push(ms(start.elapsed()));
                failures += usize::from(!ok);
            }
            (times, failures)
        }));
    }
    let (mut times, mut failures) = (Vec::new(), 0);
    for task in tasks {
        let (t, f) = task.await.unwrap();
        times.extend(t);
        failures += f;
    }
    let wall = started.elapsed().as_secs_f64();
    for c in 0..CONVERSATIONS {
        d.delete(&format!("{tag}{c}")).await.unwrap();
    }
    (failures, pct(times.clone(), 50), pct(times, 99), wall)
}

async fn file_out(d: &dyn SandboxDriver, chat: &str) -> f64 {
    let script = format!("head -c {FILE_BYTES} /dev/urandom > out.bin");
    let req = ExecRequest {
        argv: vec!["sh".into(), "-c".into(), script],
        env: Default::default(),
        timeout: Duration::from_secs(60),
    };
    run_to_end(d.exec(chat, req).await.unwrap()).await.unwrap();
    let mut times = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let bytes = d.get_file(chat, "out.bin", FILE_BYTES as u64).await.unwrap();
        times.push(ms(start.elapsed()));
        assert_eq!(bytes.len(), FILE_BYTES);
    }
    d.delete(chat).await.unwrap();
    pct(times, 50)
}

#[tokio::main]
async fn main() {
    if std::env::var("LENS_TEST_OPENSHELL_GATEWAY").is_ok() {
        return real::main().await;
    }
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn SandboxDriver> =
        Arc::new(LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &agent())).unwrap());
    let contain = nix::unistd::geteuid().is_root();
    let fake = FakeGateway::start_with(FakeOptions { provision: Duration::ZERO, contain, ..Default::default() })
        .await
        .unwrap();
    let address =
        GatewayAddress { address: fake.address_string(), cert_dir: fake.cert_dir().to_owned(), server_name: None };
    let settings = DriverSettings {
        limits: Default::default(),
        admission: AdmissionLimits::for_host(),
        pool_size: 0,
        network: None,
    };
    let gateway = lens_sandbox::start_gateway(GatewayOptions::new(address.clone(), agent()), &settings).unwrap();
    let networked = DriverSettings { network: Some(files_example()), ..settings.clone() };
    let gateway_net = lens_sandbox::start_gateway(GatewayOptions::new(address, agent()), &networked).unwrap();

    let how = if contain { "each sandbox in a container" } else { "commands as plain processes" };
    println!("lens gateway driver figures (fake gateway, {how}, mutual TLS on loopback; p50; 2-core machine)");
    let (first_l, first_g) = (first_runs(&*local, "fl").await, first_runs(&*gateway, "fg").await);
    println!(
        "  first run in a new conversation  gateway {first_g:>8.2} ms   local {first_l:>8.2} ms  ({:.2}x; target <= 2x: {})",
        first_g / first_l,
        if first_g <= 2.0 * first_l { "met" } else { "NOT met" }
    );
    let (warm_l, warm_g) = (warm_runs(&*local, "wl").await, warm_runs(&*gateway, "wg").await);
    println!(
        "  warm run_python print(1)         gateway {warm_g:>8.2} ms   local {warm_l:>8.2} ms  (adds {:.2} ms; target <= 5 ms: {})",
        warm_g - warm_l,
        if warm_g - warm_l <= 5.0 { "met" } else { "NOT met" }
    );
    let warm_n = warm_runs(&*gateway_net, "wn").await;
    println!("{}", networked_line(warm_n, warm_g, 2));
    let (file_l, file_g) = (file_out(&*local, "xl").await, file_out(&*gateway, "xg").await);
    println!(
        "  25 MB file out (get_file)        gateway {file_g:>8.2} ms   local {file_l:>8.2} ms  ({:.2}x)",
        file_g / file_l
    );
    let n = CONVERSATIONS * RUNS_EACH;
    for (name, d, tag) in [("gateway", gateway.clone(), "mg"), ("local  ", local.clone(), "ml")] {
        let (failures, p50, p99, wall) = many_at_once(d, tag).await;
        println!(
            "  {CONVERSATIONS} conversations x {RUNS_EACH} runs at once, {name}: {failures} failures of {n}; run p50 {p50:.1} ms, p99 {p99:.1} ms, all in {wall:.1} s"
        );
    }
}

/// On NVIDIA's real gateway and supervisor (podman, mutual TLS, the test bridge), under
/// scripts/openshell/real-gateway: a first run (and how much of it is the gateway making
/// its sandbox ready, CreateSandbox until READY asked directly), a warm run, the same with
/// a network on (its record read after its ending: target +<= 50 ms), and a person
/// opening a conversation while an idle sandbox holds the only room (on the gateway its
/// container's stop waits out a 10 s timeout; Lens stops it in the background; target:
/// at most 2 s), each next to this machine's sandbox.
mod real {
    use lens_openshell::{
        proto::openshell::v1::{
            CreateSandboxRequest, DeleteSandboxRequest, GetSandboxRequest, SandboxPhase, SandboxSpec, SandboxTemplate,
        },
        workspace_scope,
    };

    use super::*;

    /// CreateSandbox until READY, asked of the gateway directly.
    async fn ready_times(address: &GatewayAddress, image: &str) -> f64 {
        let mut client = lens_openshell::connect(address).await.unwrap();
        let mut times = Vec::new();
        for i in 0..5 {
            let name = format!("lens-bench-ready-{i}");
            let start = Instant::now();
            let template = SandboxTemplate { image: image.to_owned(), ..Default::default() };
            let spec = SandboxSpec { template: Some(template), ..Default::default() };
            let create = CreateSandboxRequest {
                name: name.clone(),
                spec: Some(spec),
                workspace_scope: workspace_scope(),
                ..Default::default()
            };
            client.create_sandbox(create).await.unwrap();
            loop {
                let get = GetSandboxRequest { name: name.clone(), workspace_scope: workspace_scope() };
                let phase = client
                    .get_sandbox(get)
                    .await
                    .unwrap()
                    .into_inner()
                    .sandbox
                    .and_then(|s| s.status)
                    .map(|s| s.phase());
                if phase == Some(SandboxPhase::Ready) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            times.push(ms(start.elapsed()));
            let delete = DeleteSandboxRequest {
                name,
                workspace_scope: workspace_scope(),
                allow_missing: true,
                ..Default::default()
            };
            client.delete_sandbox(delete).await.unwrap();
        }
        pct(times, 50)
    }

    /// A first run in a conversation while an idle sandbox holds the only room.
    async fn opening_with_a_full_room(d: &dyn SandboxDriver, tag: &str) -> f64 {
        let mut times = Vec::new();
        for i in 0..5 {
            print_one(d, &format!("{tag}idle{i}")).await;
            times.push(print_one(d, &format!("{tag}new{i}")).await);
        }
        d.shutdown().await;
        for s in d.list().await.unwrap() {
            d.delete(&s.chat_id).await.unwrap();
        }
        pct(times, 50)
    }

    fn settings(max_running: usize) -> DriverSettings {
        DriverSettings {
            limits: Default::default(),
            admission: AdmissionLimits {
                max_running,
                max_memory_bytes: 64 << 30,
                wait: Duration::from_secs(120),
                per_person: max_running,
            },
            pool_size: 0,
            network: None,
        }
    }

    /// The figures on NVIDIA's real gateway, next to this machine's sandbox.
    pub(super) async fn main() {
        let Ok(address) = std::env::var("LENS_TEST_OPENSHELL_GATEWAY") else { return };
        let cert_dir = std::env::var("LENS_TEST_OPENSHELL_CERTS").expect("the gateway's certificates").into();
        let address = GatewayAddress { address, cert_dir, server_name: None };
        let mut options = GatewayOptions::new(address.clone(), agent());
        options.image = std::env::var("LENS_TEST_OPENSHELL_IMAGE").unwrap_or_default();
        let dir = tempfile::tempdir().unwrap();
        let local_driver = |max_running| -> Arc<dyn SandboxDriver> {
            let d = LocalDriver::new(LocalOptions::new(&dir.path().join(format!("s{max_running}")), &agent())).unwrap();
            d.configure(&settings(max_running));
            Arc::new(d)
        };
        let (local, gateway) = (local_driver(8), lens_sandbox::start_gateway(options.clone(), &settings(8)).unwrap());

        println!(
            "lens on NVIDIA's real gateway (podman, mutual TLS, the test bridge) against this machine's sandbox (p50; 2-core machine)"
        );
        let (first_l, first_g) = (first_runs(&*local, "fl").await, first_runs(&*gateway, "fg").await);
        let ready = ready_times(&address, &options.image).await;
        println!(
            "  first run in a new conversation  gateway {first_g:>8.1} ms   local {first_l:>8.1} ms  ({:.1}x; of it the gateway's sandbox made ready: {ready:.1} ms)",
            first_g / first_l
        );
        let (warm_l, warm_g) = (warm_runs(&*local, "wl").await, warm_runs(&*gateway, "wg").await);
        println!(
            "  warm run_python print(1)         gateway {warm_g:>8.1} ms   local {warm_l:>8.1} ms  (adds {:.1} ms)",
            warm_g - warm_l
        );
        let networked = DriverSettings { network: Some(files_example()), ..settings(8) };
        let gateway_net = lens_sandbox::start_gateway(options.clone(), &networked).unwrap();
        println!("{}", networked_line(warm_runs(&*gateway_net, "wn").await, warm_g, 1));
        let one_room = lens_sandbox::start_gateway(options, &settings(1)).unwrap();
        let (open_l, open_g) =
            (opening_with_a_full_room(&*local_driver(1), "ol").await, opening_with_a_full_room(&*one_room, "og").await);
        println!(
            "  opening a conversation, the only room held by an idle sandbox  gateway {open_g:>8.1} ms   local {open_l:>8.1} ms  (target <= 2000 ms: {})",
            if open_g <= 2000.0 { "met" } else { "NOT met" }
        );
    }
}
