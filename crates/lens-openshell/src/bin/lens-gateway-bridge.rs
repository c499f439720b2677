//! `lens-gateway-bridge`: the test bridge in front of NVIDIA's real gateway (see
//! `bridge.rs`), as a process. `--gateway HOST:PORT --certs DIR [--listen ADDR]`; prints one
//! JSON line with the address Lens is to use, then serves until it is signalled.

use lens_openshell::GatewayAddress;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (mut gateway, mut certs, mut listen) = (None, None, "127.0.0.1:0".to_owned());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--gateway" => gateway = args.next(),
            "--certs" => certs = args.next(),
            "--listen" => listen = args.next().unwrap_or(listen),
            other => fail(&format!("unknown argument {other}")),
        }
    }
    let (Some(address), Some(certs)) = (gateway, certs) else { fail("usage: --gateway HOST:PORT --certs DIR") };
    let Ok(listen) = listen.parse() else { fail("--listen takes an address and port") };
    let to = GatewayAddress { address, cert_dir: certs.into(), server_name: None };
    let bridge = match lens_openshell::bridge::start(listen, &to).await {
        Ok(b) => b,
        Err(e) => fail(&format!("the bridge could not start: {e}")),
    };
    println!("{{\"address\":\"{}\"}}", bridge.address);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
    }
}

fn fail(message: &str) -> ! {
    eprintln!("lens-gateway-bridge: {message}");
    std::process::exit(2);
}
