//! The TLS registry stand-in (`registry_standin.py`) as tests and benchmarks start it:
//! a PEP 503 index and an npm registry named `localhost`, with a certificate of its own.

use std::{path::Path, process::Child, time::Duration};

use lens_sandbox::{
    Network,
    egress::{Cidr, EgressPolicy},
    read_only::UpstreamTrust,
    registries::{Registries, sandbox_env},
};

/// The stand-in, killed when dropped.
pub struct Standin {
    child: Child,
    pub port: u16,
    log: std::path::PathBuf,
    /// Its certificate authority, PEM.
    pub ca: Vec<u8>,
    _dir: tempfile::TempDir,
}

impl Drop for Standin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Standin {
    /// Starts it; the wheel carries `pad` more bytes (for download figures).
    pub async fn start(pad: usize) -> Self {
        let dir = tempfile::tempdir().unwrap();
        lens_openshell::fake::write_certs(dir.path(), &["localhost"]).unwrap();
        Self::start_with(dir, None, pad, "127.0.0.1").await
    }

    /// Starts it on `address` with the certificate in `certs` (`server/tls.{crt,key}`,
    /// `ca.crt`): a gateway's sandboxes reach the host elsewhere than on loopback.
    pub async fn start_at(certs: &Path, address: &str) -> Self {
        Self::start_with(tempfile::tempdir().unwrap(), Some(certs), 0, address).await
    }

    async fn start_with(dir: tempfile::TempDir, certs: Option<&Path>, pad: usize, address: &str) -> Self {
        let certs = certs.unwrap_or(dir.path()).to_owned();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/registry_standin.py");
        let (log, port_file) = (dir.path().join("requests.log"), dir.path().join("port"));
        let mut child = std::process::Command::new("python3")
            .arg(script)
            .arg(certs.join("server/tls.crt"))
            .arg(certs.join("server/tls.key"))
            .arg(&log)
            .arg(&port_file)
            .arg(pad.to_string())
            .arg(address)
            .spawn()
            .unwrap();
        for _ in 0..400 {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                let ca = std::fs::read(certs.join("ca.crt")).unwrap();
                return Self { child, port: port.trim().parse().unwrap(), log, ca, _dir: dir };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("the registry stand-in did not start");
    }

    /// The requests that reached it, `METHOD /path` each.
    pub fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(str::to_owned).collect()
    }

    /// Registries mode for this stand-in, checking its certificate against `trust`.
    pub fn network(&self, trust: UpstreamTrust) -> Network {
        self.network_as("localhost", Cidr::parse("127.0.0.0/8").unwrap(), trust)
    }

    /// [`network`](Self::network), the stand-in named `host` at an address in `range`.
    pub fn network_as(&self, host: &str, range: Cidr, trust: UpstreamTrust) -> Network {
        let registries = Registries::configured(&[
            format!("https://{host}:{}/simple/", self.port),
            format!("https://{host}:{}/npm/", self.port),
        ]);
        let mut env: Vec<(String, String)> = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"]
            .iter()
            .map(|k| (k.to_string(), "http://127.0.0.1:3128".to_string()))
            .collect();
        env.extend(sandbox_env(&registries));
        let policy = EgressPolicy { hosts: registries.hosts.clone(), trusted: vec![range] };
        Network { policy, env, read_only: Some(trust) }
    }
}
