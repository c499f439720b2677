//! The gateway driver on NVIDIA's real gateway and supervisor (podman, mutual TLS, the
//! test bridge), each figure next to this machine's sandbox measured in the same run:
//!
//! - first run in a new conversation (`run_python("print(1)")`), and how much of it is
//!   the gateway making its sandbox ready (CreateSandbox until READY, asked directly);
//! - a warm `run_python` (`print(1)`);
//! - a person opening a conversation while the only room is held by an idle sandbox: the
//!   idle one is stopped to make room (on the gateway its container's stop waits out a
//!   10 s timeout; Lens stops it in the background) — target: at most 2 s.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && scripts/openshell/real-gateway
//! cargo bench -p lens-sandbox --bench real_gateway` (`make bench` does both).

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use lens_openshell::{
    proto::openshell::v1::{
        CreateSandboxRequest, DeleteSandboxRequest, GetSandboxRequest, SandboxPhase, SandboxSpec, SandboxTemplate,
    },
    workspace_scope,
};
use lens_sandbox::{
    AdmissionLimits, DriverSettings, GatewayAddress, GatewayOptions, LocalDriver, LocalOptions, RunEnding,
    SandboxDriver, run_to_end,
};

const ROUNDS: usize = 5;

fn agent() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let agent = exe.parent().and_then(|d| d.parent()).unwrap().join("lens-sandbox-agent");
    assert!(agent.is_file(), "build it first: cargo build --release -p lens-sandbox-agent");
    agent
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn print_one(d: &dyn SandboxDriver, chat: &str) -> f64 {
    let start = Instant::now();
    let run = run_to_end(d.run_python(chat, "print(1)", Duration::from_secs(120)).await.unwrap()).await.unwrap();
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
    median(times)
}

async fn warm_runs(d: &dyn SandboxDriver, chat: &str) -> f64 {
    print_one(d, chat).await;
    let mut times = Vec::new();
    for _ in 0..ROUNDS * 6 {
        times.push(print_one(d, chat).await);
    }
    d.delete(chat).await.unwrap();
    median(times)
}

/// CreateSandbox until READY, asked of the gateway directly.
async fn ready_times(address: &GatewayAddress, image: &str) -> f64 {
    let mut client = lens_openshell::connect(address).await.unwrap();
    let mut times = Vec::new();
    for i in 0..ROUNDS {
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
            let phase =
                client.get_sandbox(get).await.unwrap().into_inner().sandbox.and_then(|s| s.status).map(|s| s.phase());
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
    median(times)
}

/// A first run in a conversation while an idle sandbox holds the only room.
async fn opening_with_a_full_room(d: &dyn SandboxDriver, tag: &str) -> f64 {
    let mut times = Vec::new();
    for i in 0..ROUNDS {
        print_one(d, &format!("{tag}idle{i}")).await;
        times.push(print_one(d, &format!("{tag}new{i}")).await);
    }
    d.shutdown().await;
    for s in d.list().await.unwrap() {
        d.delete(&s.chat_id).await.unwrap();
    }
    median(times)
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

#[tokio::main]
async fn main() {
    let Ok(address) = std::env::var("LENS_TEST_OPENSHELL_GATEWAY") else {
        println!("not run: NVIDIA's gateway runs under scripts/openshell/real-gateway");
        return;
    };
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
        "lens on NVIDIA's real gateway (podman, mutual TLS, the test bridge) against this machine's sandbox (median; 2-core machine)"
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
    let one_room = lens_sandbox::start_gateway(options, &settings(1)).unwrap();
    let (open_l, open_g) =
        (opening_with_a_full_room(&*local_driver(1), "ol").await, opening_with_a_full_room(&*one_room, "og").await);
    println!(
        "  opening a conversation, the only room held by an idle sandbox  gateway {open_g:>8.1} ms   local {open_l:>8.1} ms  (target <= 2000 ms: {})",
        if open_g <= 2000.0 { "met" } else { "NOT met" }
    );
}
