//! Lens's settings in the gateway's terms: the network mode as its network policy, the
//! limits as the sandbox's resources.

use std::collections::HashMap;

use lens_openshell::proto::openshell::sandbox::v1::{
    FilesystemPolicy, LandlockPolicy, NetworkAccessPreset, NetworkBinary, NetworkEndpoint, NetworkEnforcementMode,
    NetworkPolicyRule, NetworkTlsMode, ProcessPolicy, SandboxPolicy,
};

use crate::{Limits, Network};

/// The ports a listed host may be reached on.
const WEB_PORTS: &[u32] = &[443, 80];

/// The variables naming the registries' URLs (`registries::sandbox_env`).
const REGISTRY_URLS: &[&str] = &["PIP_INDEX_URL", "npm_config_registry"];

/// The ports `host` may be reached on: the web ports, and the port a registry URL names
/// for it (`https://mirror.example:8443/simple/`). The gateway's policy lists exact
/// ports, where this machine's proxy lets a listed host out on any.
fn ports_of(host: &str, network: &Network) -> Vec<u32> {
    let mut ports = WEB_PORTS.to_vec();
    let named = network.env.iter().filter(|(k, _)| REGISTRY_URLS.contains(&k.as_str())).filter_map(|(_, url)| {
        let authority = url.split_once("://")?.1.split(['/', '?', '#']).next()?;
        let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
        let (name, port) = authority.rsplit_once(':')?;
        name.eq_ignore_ascii_case(host).then(|| port.parse::<u16>().ok()).flatten()
    });
    for port in named.map(u32::from) {
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    ports
}

/// The programs a rule lets out: every program in the sandbox. The gateway's proxy lets
/// a connection out only when the calling program (or one of its ancestors) matches a
/// rule's `binaries`, so a rule naming none lets nothing out; Lens decides by host, not
/// by program (pip, npm, curl and the Python kernel alike), and `/**` is the policy
/// engine's glob for any path.
const ANY_PROGRAM: &str = "/**";

/// What every process in a sandbox may read, under the supervisor's Landlock: the
/// system, and as NVIDIA's default policy lists them, `/proc` (a process's own view of
/// itself) and `/dev/urandom`; and the container's own cgroup, whose `memory.events`
/// the agent reads to tell a run killed for memory from one that failed.
const READ_ONLY: &[&str] = &["/usr", "/etc", "/lib", "/bin", "/proc", "/dev/urandom", "/sys/fs/cgroup"];

/// What it may write besides the home: scratch space, and `/dev/null`, without which no
/// program whose output is thrown away could start (`sh: cannot create /dev/null`).
const READ_WRITE: &[&str] = &["/tmp", "/dev/shm", "/dev/null"];

/// The policy of one conversation's sandbox: the site's `network` as that conversation
/// may use it (narrowed by its owner's groups), with the hosts its owner allowed.
pub(crate) fn chat_policy(network: Option<&Network>, home: &str, chat: &crate::relay::ChatNetwork) -> SandboxPolicy {
    let network = chat.narrow(network.cloned()).ok();
    policy(network.as_ref(), home, chat.owner_hosts())
}

/// What a sandbox may touch and reach. Off: no network rule, so the gateway's proxy
/// lets nothing out. Registries or hosts: each listed name on the web ports, and its
/// public addresses only (the gateway refuses private ones unless listed in
/// `allowed_ips`; the admin's trusted ranges are listed there). Registries: each as the
/// gateway's read-only REST access (its proxy ends TLS and lets GET and HEAD through),
/// the rule Lens's own read-only proxy applies on this machine.
///
/// `also`: the hosts the conversation's owner allowed for it, each a plain endpoint on
/// the web ports (in every mode with a network), in a rule of their own.
pub(crate) fn policy(network: Option<&Network>, home: &str, also: &[String]) -> SandboxPolicy {
    let mut network_policies = HashMap::new();
    if let Some(network) = network.filter(|_| !also.is_empty()) {
        let allowed_ips: Vec<String> = network.policy.trusted.iter().map(ToString::to_string).collect();
        let endpoints = also
            .iter()
            .filter(|h| !network.policy.hosts.contains(h))
            .map(|host| NetworkEndpoint {
                host: host.clone(),
                ports: WEB_PORTS.to_vec(),
                allowed_ips: allowed_ips.clone(),
                ..Default::default()
            })
            .collect();
        let binaries = vec![NetworkBinary { path: ANY_PROGRAM.to_owned() }];
        let rule = NetworkPolicyRule { name: "lens-conversation".to_owned(), endpoints, binaries };
        network_policies.insert("lens-conversation".to_owned(), rule);
    }
    if let Some(network) = network.filter(|n| !n.policy.hosts.is_empty()) {
        let allowed_ips: Vec<String> = network.policy.trusted.iter().map(ToString::to_string).collect();
        let endpoints = network
            .policy
            .hosts
            .iter()
            .map(|host| {
                let mut endpoint = NetworkEndpoint {
                    host: host.clone(),
                    ports: ports_of(host, network),
                    allowed_ips: allowed_ips.clone(),
                    ..Default::default()
                };
                if network.read_only.is_some() {
                    endpoint.protocol = "rest".to_owned();
                    endpoint.set_tls(NetworkTlsMode::Terminate);
                    endpoint.set_enforcement(NetworkEnforcementMode::Enforce);
                    endpoint.set_access(NetworkAccessPreset::ReadOnly);
                }
                endpoint
            })
            .collect();
        let binaries = vec![NetworkBinary { path: ANY_PROGRAM.to_owned() }];
        network_policies.insert("lens".to_owned(), NetworkPolicyRule { name: "lens".to_owned(), endpoints, binaries });
    }
    SandboxPolicy {
        version: 1,
        filesystem: Some(FilesystemPolicy {
            include_workdir: true,
            read_only: READ_ONLY.iter().map(|s| s.to_string()).collect(),
            read_write: [home].iter().chain(READ_WRITE).map(|s| s.to_string()).collect(),
        }),
        landlock: Some(LandlockPolicy { compatibility: "hard_requirement".to_owned() }),
        process: Some(ProcessPolicy { run_as_user: "sandbox".to_owned(), run_as_group: "sandbox".to_owned() }),
        network_policies,
    }
}

/// The limits as Kubernetes-style resources, which the gateway's drivers read: `limits`
/// only, since the Docker driver refuses any `requests` (FAILED_PRECONDITION "docker
/// compute driver does not support resources.requests.cpu").
pub(crate) fn resources(limits: &Limits) -> prost_types::Struct {
    use prost_types::{Struct, Value, value::Kind};
    let text = |s: String| Value { kind: Some(Kind::StringValue(s)) };
    let amounts = || {
        let fields = [("cpu", format!("{}m", limits.cpu_millis)), ("memory", limits.memory_bytes.to_string())]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), text(v)))
            .collect();
        Value { kind: Some(Kind::StructValue(Struct { fields })) }
    };
    Struct { fields: [("limits".to_owned(), amounts())].into_iter().collect() }
}

/// The environment a network adds to runs, less the local driver's own proxy and what
/// the sandbox sets itself (`sandbox_own`): on a gateway, programs go out through the
/// gateway's proxy, which ends their TLS, and trust the CA the sandbox names for it. pip
/// is pointed at that CA too, or at the system's when the sandbox names none; so is npm,
/// whose `cafile` (an image's `/etc/npmrc` may set one) replaces the CAs Node would
/// otherwise add from `NODE_EXTRA_CA_CERTS`.
pub(crate) fn network_env(network: Option<&Network>, sandbox_own: &[(String, String)]) -> Vec<(String, String)> {
    let Some(network) = network else { return Vec::new() };
    let own = |k: &str| sandbox_own.iter().any(|(o, _)| o.eq_ignore_ascii_case(k));
    let mut env: Vec<(String, String)> =
        network.env.iter().filter(|(k, _)| !k.to_ascii_uppercase().ends_with("_PROXY") && !own(k)).cloned().collect();
    let sandbox_ca = sandbox_own.iter().find(|(k, _)| k == "SSL_CERT_FILE" || k == "REQUESTS_CA_BUNDLE");
    if let Some((_, ca)) = sandbox_ca {
        if let Some(pip) = env.iter_mut().find(|(k, _)| k == "PIP_CERT") {
            pip.1 = ca.clone();
        }
        if env.iter().any(|(k, _)| k == "npm_config_registry") {
            env.push(("npm_config_cafile".to_owned(), ca.clone()));
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egress::{Cidr, EgressPolicy};

    #[test]
    fn off_lets_nothing_out_and_hosts_are_listed_by_name() {
        assert!(policy(None, "/sandbox", &[]).network_policies.is_empty());
        assert!(policy(None, "/sandbox", &["x.example".into()]).network_policies.is_empty(), "off stays off");
        let network = Network {
            policy: EgressPolicy {
                hosts: vec!["files.example.org".into()],
                trusted: vec![Cidr::parse("10.0.0.0/8").unwrap()],
            },
            env: vec![("HTTPS_PROXY".into(), "http://127.0.0.1:1".into()), ("PIP_USER".into(), "1".into())],
            read_only: None,
        };
        let p = policy(Some(&network), "/sandbox", &[]);
        assert!(!p.network_policies.contains_key("lens-conversation"));
        let rule = &p.network_policies["lens"];
        assert_eq!(rule.endpoints.len(), 1);
        assert_eq!(rule.endpoints[0].host, "files.example.org");
        assert_eq!(rule.endpoints[0].ports, [443, 80]);
        assert_eq!(rule.endpoints[0].allowed_ips, ["10.0.0.0/8"]);
        assert_eq!(rule.endpoints[0].access(), NetworkAccessPreset::Unspecified, "hosts mode: a plain tunnel");
        assert_eq!(rule.binaries, [NetworkBinary { path: "/**".into() }], "every program may use the rule");
        assert_eq!(network_env(Some(&network), &[]), [("PIP_USER".to_string(), "1".to_string())]);
    }

    #[test]
    fn the_sandboxs_own_ca_wins_and_pip_trusts_it() {
        let network = Network {
            policy: EgressPolicy { hosts: vec!["index.example.org".into()], trusted: vec![] },
            env: crate::registries::sandbox_env(&Default::default()),
            read_only: None,
        };
        let ca = "/etc/openshell-tls/ca-bundle.pem".to_string();
        let own = [("SSL_CERT_FILE".to_string(), ca.clone()), ("REQUESTS_CA_BUNDLE".to_string(), ca.clone())];
        let env = network_env(Some(&network), &own);
        assert!(!env.iter().any(|(k, _)| k == "SSL_CERT_FILE" || k == "REQUESTS_CA_BUNDLE"), "{env:?}");
        assert!(env.contains(&("PIP_CERT".to_string(), ca.clone())), "{env:?}");
        assert!(!env.iter().any(|(k, _)| k == "npm_config_cafile"), "no npm registry, no npm setting: {env:?}");
        let npm = Network {
            env: crate::registries::sandbox_env(&crate::registries::Registries::configured(&[
                "https://npm.example.org/npm/".into(),
            ])),
            ..network
        };
        let env = network_env(Some(&npm), &own);
        assert!(env.contains(&("npm_config_cafile".to_string(), ca)), "npm trusts it too: {env:?}");
        assert!(env.contains(&("NODE_EXTRA_CA_CERTS".to_string(), "/etc/ssl/certs/ca-certificates.crt".into())));
    }

    #[test]
    fn limits_only_and_the_paths_every_program_needs() {
        let r = resources(&Limits::default());
        assert_eq!(r.fields.keys().collect::<Vec<_>>(), ["limits"], "the Docker driver refuses requests");
        let fs = policy(None, "/sandbox", &[]).filesystem.unwrap();
        for p in ["/proc", "/dev/urandom", "/sys/fs/cgroup"] {
            assert!(fs.read_only.iter().any(|r| r == p), "{p} readable");
        }
        assert!(fs.read_write.iter().any(|r| r == "/dev/null"), "/dev/null writable");
        assert_eq!(fs.read_write[0], "/sandbox");
    }

    #[test]
    fn registries_are_the_gateways_read_only_rest_access() {
        let trust = crate::read_only::UpstreamTrust::from_pems(&[crate::read_only::SandboxCa::new()
            .unwrap()
            .cert_pem()
            .as_bytes()])
        .unwrap();
        let network = Network {
            policy: EgressPolicy { hosts: vec!["index.example.org".into()], trusted: vec![] },
            env: vec![],
            read_only: Some(trust),
        };
        let also = ["data.example.org".to_string(), "index.example.org".to_string()];
        let p = policy(Some(&network), "/sandbox", &also);
        let endpoint = &p.network_policies["lens"].endpoints[0];
        assert_eq!(endpoint.protocol, "rest");
        assert_eq!(endpoint.tls(), NetworkTlsMode::Terminate);
        assert_eq!(endpoint.enforcement(), NetworkEnforcementMode::Enforce);
        assert_eq!(endpoint.access(), NetworkAccessPreset::ReadOnly);
        // A host the conversation's owner allowed: a plain tunnel, in a rule of its own;
        // a registry stays read-only.
        let theirs = &p.network_policies["lens-conversation"];
        assert_eq!(theirs.endpoints.len(), 1);
        assert_eq!(
            (theirs.endpoints[0].host.as_str(), theirs.endpoints[0].protocol.as_str()),
            ("data.example.org", "")
        );
        assert_eq!(theirs.endpoints[0].access(), NetworkAccessPreset::Unspecified);
        assert_eq!(theirs.binaries, [NetworkBinary { path: "/**".into() }]);
    }

    #[test]
    fn a_registry_on_a_port_of_its_own_is_listed_on_that_port_too() {
        let network = Network {
            policy: crate::egress::EgressPolicy {
                hosts: vec!["mirror.example".into(), "other.example".into()],
                trusted: vec![],
            },
            env: vec![
                ("PIP_INDEX_URL".into(), "https://user:pw@Mirror.example:8443/simple/".into()),
                ("npm_config_registry".into(), "https://mirror.example/npm/".into()),
            ],
            read_only: None,
        };
        let policy = policy(Some(&network), "/sandbox", &[]);
        let rule = &policy.network_policies["lens"];
        assert_eq!(rule.endpoints[0].ports, [443, 80, 8443]);
        assert_eq!(rule.endpoints[1].ports, [443, 80], "only the registry's own host");
    }
}
