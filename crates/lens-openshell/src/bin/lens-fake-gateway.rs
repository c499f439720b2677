//! `lens-fake-gateway`: the fake OpenShell gateway as a process, for the browser tests,
//! the API contract run and `make bench`. Prints one JSON line with its address and
//! certificate folder, then serves until its standard input closes or it is signalled.

use lens_openshell::fake::FakeGateway;
use tokio::io::AsyncReadExt;

#[tokio::main]
async fn main() {
    let fake = match FakeGateway::start().await {
        Ok(f) => f,
        Err(e) => {
            eprintln!("the fake gateway could not start: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "{{\"address\":\"{}\",\"cert_dir\":\"{}\"}}",
        fake.address_string(),
        fake.cert_dir().display().to_string().replace('\\', "\\\\").replace('"', "\\\"")
    );
    let mut stdin = tokio::io::stdin();
    let mut sink = [0u8; 64];
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    loop {
        tokio::select! {
            read = stdin.read(&mut sink) => if matches!(read, Ok(0) | Err(_)) { break },
            _ = tokio::signal::ctrl_c() => break,
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => break,
        }
    }
    // Dropping the fake kills its commands and removes its folders.
    drop(fake);
}
