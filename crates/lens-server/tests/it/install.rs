//! The Compose install, as far as it can be tested without Docker: compose.yaml parses;
//! its services, profiles, volumes and read-only flags are what docs/install.md says; the
//! folder `openshell-key` writes, from certificates in the layout `generate-certs`
//! writes, is one the gateway driver reads and connects with; the Dockerfile builds
//! what compose.yaml runs.

use std::path::Path;

use lens_openshell::fake::FakeGateway;
use serde_norway::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().parent().unwrap()
}

fn compose_file(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join(name)).unwrap();
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{name} parses: {e}"))
}

fn compose() -> Value {
    compose_file("compose.yaml")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_sequence().map(|s| s.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

#[test]
fn compose_has_lens_and_the_sandbox_profile_as_documented() {
    let c = compose();
    let services = &c["services"];
    let names: Vec<&str> = services.as_mapping().unwrap().keys().filter_map(|k| k.as_str()).collect();
    assert_eq!(names, ["lens", "openshell-init", "openshell-key", "openshell-gateway"]);
    assert!(services["lens"]["profiles"].is_null(), "Lens starts without a profile");
    for s in ["openshell-init", "openshell-key", "openshell-gateway"] {
        assert_eq!(strings(&services[s]["profiles"]), ["sandbox"], "{s}");
    }
    for s in ["lens", "openshell-init", "openshell-key", "openshell-gateway"] {
        assert_eq!(services[s]["read_only"].as_bool(), Some(true), "{s} has a read-only root");
        assert!(services[s]["cap_add"].is_null() && services[s]["privileged"].is_null(), "{s} adds nothing");
        assert!(strings(&services[s]["security_opt"]).contains(&"no-new-privileges:true".to_string()), "{s}");
    }
    let gateway = &services["openshell-gateway"];
    assert_eq!(gateway["image"].as_str(), Some("ghcr.io/nvidia/openshell/gateway:0.1.4"));
    assert_eq!(gateway["environment"]["OPENSHELL_TELEMETRY_ENABLED"].as_str(), Some("false"));
    assert_eq!(strings(&gateway["cap_drop"]), ["ALL"]);
    assert_eq!(strings(&gateway["expose"]), ["17670"], "on the Compose network only");
    assert!(gateway["ports"].is_null(), "the gateway is not published on the host");
    // Its state where its read-only root lets it write (NVIDIA's compose sets both), at the
    // same path inside and out: the host's Docker mounts files from it into sandboxes.
    let state_dir = "${OPENSHELL_STATE:-/var/lib/openshell}";
    for var in ["HOME", "XDG_DATA_HOME"] {
        assert_eq!(gateway["environment"][var].as_str(), Some(state_dir), "{var}");
    }
    assert_eq!(gateway["environment"]["OPENSHELL_LOCAL_TLS_DIR"].as_str(), Some(format!("{state_dir}/tls").as_str()));
    let state = gateway["volumes"]
        .as_sequence()
        .unwrap()
        .iter()
        .any(|v| v["target"].as_str() == Some(state_dir) && v["source"].as_str() == Some(state_dir));
    assert!(state, "the state folder is a mount at the same path, not the read-only root");
    // Sandboxes on a network of their own, where the gateway has the address gateway.toml
    // names; Lens is not on it.
    let on_sandboxes = &gateway["networks"]["sandboxes"]["ipv4_address"];
    assert!(gateway["networks"].as_mapping().unwrap().contains_key("default"));
    assert!(services["lens"]["networks"].is_null(), "Lens only on Compose's default network");
    assert_eq!(c["networks"]["sandboxes"]["name"].as_str(), Some("openshell-sandboxes"));
    assert!(gateway["extra_hosts"].is_null(), "podman 4.3 refuses host-gateway");
    // The file's schema is checked with NVIDIA's own fixture checks (scripts/openshell-conformance).
    let toml = std::fs::read_to_string(root().join("deploy/openshell/gateway.toml")).unwrap();
    assert!(toml.contains("compute_driver = \"docker\"") && toml.contains("version = 2") && toml.contains(":17670"));
    let address = on_sandboxes.as_str().unwrap();
    assert!(toml.contains(&format!("host_gateway_ip = \"{address}\"")), "{address}");
    assert!(toml.contains("network_name = \"openshell-sandboxes\""));
    // Lens's data in its volume; the client folder read-only where Settings looks for it.
    let lens_volumes = strings(&services["lens"]["volumes"]);
    assert!(lens_volumes.contains(&"lens-data:/var/lib/lens/data".to_string()), "{lens_volumes:?}");
    let client = format!("openshell-client:{}:ro", lens_server::gateway_preflight::COMPOSE_CERT_DIR);
    assert!(lens_volumes.contains(&client), "{lens_volumes:?}");
    assert_eq!(services["lens"]["environment"]["LENS_COMPOSE"].as_str(), Some("1"));
    // Only openshell-key and the gateway see the certificates; the key service reads them read-only.
    let tls = format!("{state_dir}/tls:{state_dir}/tls:ro");
    assert!(strings(&services["openshell-key"]["volumes"]).contains(&tls));
    let command = lens_server::gateway_preflight::COMPOSE_COMMAND;
    let install = std::fs::read_to_string(root().join("docs/install.md")).unwrap();
    assert!(install.contains(command), "docs/install.md gives the command Settings shows");
    assert!(lens_server::gateway_preflight::COMPOSE_ADDRESS.starts_with("openshell-gateway:"));
    let volumes: Vec<&str> = c["volumes"].as_mapping().unwrap().keys().filter_map(|k| k.as_str()).collect();
    assert_eq!(volumes, ["lens-data", "openshell-client"]);
    let text = std::fs::read_to_string(root().join("compose.yaml")).unwrap();
    assert!(!text.contains(":?"), "compose.yaml asks for no variable: it starts with none set");
}

#[test]
fn the_scale_file_adds_three_replicas_on_postgres_garage_and_the_gateway_behind_nginx() {
    let c = compose_file("compose.scale.yaml");
    let services = &c["services"];
    let names: Vec<&str> = services.as_mapping().unwrap().keys().filter_map(|k| k.as_str()).collect();
    let scale = ["postgres", "garage", "garage-init", "lens-replica", "lens-front"];
    assert_eq!(names, scale);
    let volumes: Vec<&str> = c["volumes"].as_mapping().unwrap().keys().filter_map(|k| k.as_str()).collect();
    assert_eq!(volumes, ["postgres-data", "garage-meta", "garage-data"]);
    for s in scale {
        assert_eq!(strings(&services[s]["profiles"]), ["scale"], "{s}");
    }
    let replica = &services["lens-replica"];
    assert_eq!(replica["deploy"]["replicas"].as_u64(), Some(3));
    assert_eq!(replica["read_only"].as_bool(), Some(true));
    let env = &replica["environment"];
    assert!(env["LENS_DATABASE_URL"].as_str().is_some_and(|u| u.starts_with("postgres://lens:")), "{env:?}");
    assert_eq!(env["LENS_FILE_STORE"].as_str(), Some("s3://lens/files"));
    assert_eq!(env["LENS_SANDBOX_BACKEND"].as_str(), Some("gateway"), "replicas share their sandboxes");
    assert!(env["LENS_SECRET"].as_str().is_some_and(|s| s.contains("LENS_SECRET")), "one secret for all");
    let front = std::fs::read_to_string(root().join("deploy/nginx-scale.conf")).unwrap();
    assert!(front.contains("server lens-replica:8080;") && front.contains("proxy_buffering off;"));
    assert!(!front.contains("ip_hash") && !front.contains("sticky"), "no stickiness");
}

#[tokio::test]
async fn the_folder_openshell_key_writes_is_the_one_the_driver_reads() {
    // The fake gateway's folder has generate-certs' layout: ca.crt, server/, client/.
    let fake = FakeGateway::start().await.unwrap();
    let c = compose();
    let key = &c["services"]["openshell-key"];
    let script = strings(&key["command"]).pop().unwrap().replace("$$", "$");
    let out = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("sh")
        .args(["-c", &script])
        .env("SRC", fake.cert_dir())
        .env("DST", out.path())
        .env("OWNER", nix_uid())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!out.path().join("server").exists(), "the server's key stays with the gateway");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(out.path().join("client/tls.key")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let to = lens_openshell::GatewayAddress {
        address: fake.address_string(),
        cert_dir: out.path().to_owned(),
        server_name: None,
    };
    lens_openshell::connect(&to).await.expect("the driver connects with the copied folder");
}

fn nix_uid() -> String {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid().to_string()).unwrap_or_else(|_| "0".into())
}

#[test]
fn the_dockerfile_builds_what_compose_runs() {
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    assert!(dockerfile.matches("\nFROM ").count() + usize::from(dockerfile.starts_with("FROM ")) >= 2, "multi-stage");
    for part in ["-p lens-server -p lens-sandbox-agent", "trunk build --release", "/usr/share/lens/dist", "--uid 10001"]
    {
        assert!(dockerfile.contains(part), "the Dockerfile has {part}");
    }
    let c = compose();
    assert_eq!(c["services"]["lens"]["environment"]["LENS_WEB_DIST"].as_str(), Some("/usr/share/lens/dist"));
    assert_eq!(c["services"]["openshell-key"]["environment"]["OWNER"].as_str(), Some("10001"), "Lens's user reads it");
}
