//! The code sandbox's settings: stored in the database, overridden field by field by a
//! `--sandbox-*` option or `LENS_SANDBOX_*` variable (shown locked), checked as a whole
//! before anything is written.

use lens_types::{NetworkMode, SandboxBackend, SandboxSettingsView, UpdateSandboxSettingsRequest};

use crate::{AppError, AppState, Config};

/// The settings in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    pub enabled: bool,
    pub backend: SandboxBackend,
    pub gateway_address: String,
    pub gateway_cert_dir: String,
    pub gateway_server_name: String,
    pub network: NetworkMode,
    pub hosts: Vec<String>,
    pub trusted_egress: Vec<String>,
    pub shown: u64,
    pub timeout_secs: u64,
    pub memory_mb: u64,
    pub processes: u64,
    pub cpu_millis: u64,
    pub disk_mb: u64,
    pub idle_stop_secs: u64,
    pub unused_delete_days: u64,
    /// 0: from the host.
    pub max_running: u64,
    /// 0: a quarter of `max_running`, at least 1.
    pub max_running_per_person: u64,
    /// 0: from the host.
    pub max_memory_mb: u64,
    pub queue_wait_secs: u64,
    pub pool_size: u64,
    pub locked: Vec<String>,
}

/// Each number: (field, default, smallest, largest).
const NUMBERS: &[(&str, u64, u64, u64)] = &[
    ("shown", 4000, 100, 100_000),
    ("timeout_secs", 60, 1, 3600),
    ("memory_mb", 1024, 64, 65_536),
    ("processes", 256, 16, 4096),
    ("cpu_millis", 1000, 100, 64_000),
    ("disk_mb", 1024, 16, 1_048_576),
    ("idle_stop_secs", 600, 10, 604_800),
    ("unused_delete_days", 14, 1, 3650),
    ("max_running", 0, 0, 10_000),
    ("max_running_per_person", 0, 0, 10_000),
    ("max_memory_mb", 0, 0, 16_777_216),
    ("queue_wait_secs", 120, 1, 3600),
    ("pool_size", 1, 0, 64),
];

fn key(field: &str) -> String {
    format!("sandbox.{field}")
}

fn env_number(config: &Config, field: &str) -> Option<u64> {
    match field {
        "shown" => config.sandbox_shown,
        "timeout_secs" => config.sandbox_timeout_secs,
        "memory_mb" => config.sandbox_memory_mb,
        "processes" => config.sandbox_processes,
        "cpu_millis" => config.sandbox_cpu_millis,
        "disk_mb" => config.sandbox_disk_mb,
        "idle_stop_secs" => config.sandbox_idle_stop_secs,
        "unused_delete_days" => config.sandbox_unused_delete_days,
        "max_running" => config.sandbox_max_running,
        "max_running_per_person" => config.sandbox_max_running_per_person,
        "max_memory_mb" => config.sandbox_max_memory_mb,
        "queue_wait_secs" => config.sandbox_queue_wait_secs,
        "pool_size" => config.sandbox_pool_size,
        _ => None,
    }
}

impl SandboxSettings {
    pub async fn load(state: &AppState) -> Result<Self, AppError> {
        let config = &state.config;
        let store = &state.store;
        let mut locked = Vec::new();
        let mut lock = |field: &str, set: bool| {
            if set {
                locked.push(field.to_owned());
            }
        };
        lock("enabled", config.sandbox.is_some());
        let enabled = match config.sandbox {
            Some(on) => on,
            None => store.setting(&key("enabled")).await?.as_deref() == Some("true"),
        };
        let backend_env = config.sandbox_backend.as_deref().and_then(SandboxBackend::parse);
        lock("backend", backend_env.is_some());
        let backend = match backend_env {
            Some(b) => b,
            None => {
                store.setting(&key("backend")).await?.as_deref().and_then(SandboxBackend::parse).unwrap_or_default()
            }
        };
        let mut gateway = Vec::new();
        for (field, env) in [
            ("gateway_address", &config.sandbox_gateway),
            ("gateway_cert_dir", &config.sandbox_gateway_certs),
            ("gateway_server_name", &config.sandbox_gateway_server_name),
        ] {
            lock(field, env.is_some());
            gateway.push(match env {
                Some(v) => v.trim().to_owned(),
                None => store.setting(&key(field)).await?.unwrap_or_default(),
            });
        }
        let [gateway_address, gateway_cert_dir, gateway_server_name] =
            <[String; 3]>::try_from(gateway).map_err(|_| AppError::internal("sandbox gateway settings"))?;
        let network_env = config.sandbox_network.as_deref().and_then(NetworkMode::parse);
        lock("network", network_env.is_some());
        let network = match network_env {
            Some(n) => n,
            None => store.setting(&key("network")).await?.as_deref().and_then(NetworkMode::parse).unwrap_or_default(),
        };
        let list = |stored: Option<String>| stored.and_then(|s| serde_json::from_str::<Vec<String>>(&s).ok());
        lock("hosts", config.sandbox_hosts.is_some());
        let hosts = match &config.sandbox_hosts {
            Some(h) => h.clone(),
            None => list(store.setting(&key("hosts")).await?).unwrap_or_default(),
        };
        lock("trusted_egress", config.sandbox_trusted_egress.is_some());
        let trusted_egress = match &config.sandbox_trusted_egress {
            Some(t) => t.clone(),
            None => list(store.setting(&key("trusted_egress")).await?).unwrap_or_default(),
        };
        let mut numbers = Vec::new();
        for (field, default, ..) in NUMBERS {
            let value = match env_number(config, field) {
                Some(v) => {
                    lock(field, true);
                    v
                }
                None => store.setting(&key(field)).await?.and_then(|v| v.parse().ok()).unwrap_or(*default),
            };
            numbers.push(value);
        }
        let [
            shown,
            timeout_secs,
            memory_mb,
            processes,
            cpu_millis,
            disk_mb,
            idle_stop_secs,
            unused_delete_days,
            max_running,
            max_running_per_person,
            max_memory_mb,
            queue_wait_secs,
            pool_size,
        ] = numbers[..]
        else {
            return Err(AppError::internal("sandbox settings table"));
        };
        Ok(Self {
            enabled,
            backend,
            gateway_address,
            gateway_cert_dir,
            gateway_server_name,
            network,
            hosts,
            trusted_egress,
            shown,
            timeout_secs,
            memory_mb,
            processes,
            cpu_millis,
            disk_mb,
            idle_stop_secs,
            unused_delete_days,
            max_running,
            max_running_per_person,
            max_memory_mb,
            queue_wait_secs,
            pool_size,
            locked,
        })
    }

    pub fn view(&self, state: &AppState) -> SandboxSettingsView {
        let host = lens_sandbox::AdmissionLimits::for_host();
        let admission = self.admission();
        SandboxSettingsView {
            enabled: self.enabled,
            backend: self.backend,
            gateway_address: self.gateway_address.clone(),
            gateway_cert_dir: self.gateway_cert_dir.clone(),
            gateway_server_name: self.gateway_server_name.clone(),
            gateway_check: state.sandbox.last_gateway_check(),
            sandbox_count: state.sandbox.count(),
            network: self.network,
            hosts: self.hosts.clone(),
            trusted_egress: self.trusted_egress.clone(),
            registries: state.sandbox.registries().hosts.clone(),
            shown: self.shown,
            timeout_secs: self.timeout_secs,
            memory_mb: self.memory_mb,
            processes: self.processes,
            cpu_millis: self.cpu_millis,
            disk_mb: self.disk_mb,
            idle_stop_secs: self.idle_stop_secs,
            unused_delete_days: self.unused_delete_days,
            max_running: self.max_running,
            max_running_per_person: self.max_running_per_person,
            max_memory_mb: self.max_memory_mb,
            queue_wait_secs: self.queue_wait_secs,
            pool_size: self.pool_size,
            auto_max_running: host.max_running as u64,
            auto_max_running_per_person: lens_sandbox::AdmissionLimits::per_person_for(admission.max_running) as u64,
            auto_max_memory_mb: host.max_memory_bytes >> 20,
            locked: self.locked.clone(),
            check: state.sandbox.last_check(),
            recent_egress: state.sandbox.egress_log(),
        }
    }

    /// The sandbox's limits as the driver takes them.
    pub fn limits(&self) -> lens_sandbox::Limits {
        lens_sandbox::Limits {
            memory_bytes: self.memory_mb << 20,
            processes: self.processes,
            cpu_millis: self.cpu_millis,
            disk_bytes: self.disk_mb << 20,
        }
    }

    /// How many sandboxes may run at once, with how much memory, and how many of them one
    /// person's; 0 meaning the host's own defaults (a quarter of the sandboxes per person).
    pub fn admission(&self) -> lens_sandbox::AdmissionLimits {
        let host = lens_sandbox::AdmissionLimits::for_host();
        let max_running = if self.max_running == 0 { host.max_running } else { self.max_running as usize };
        lens_sandbox::AdmissionLimits {
            max_running,
            max_memory_bytes: if self.max_memory_mb == 0 { host.max_memory_bytes } else { self.max_memory_mb << 20 },
            wait: std::time::Duration::from_secs(self.queue_wait_secs),
            per_person: match self.max_running_per_person {
                0 => lens_sandbox::AdmissionLimits::per_person_for(max_running),
                n => n as usize,
            },
        }
    }

    /// Applies an admin's change: refused whole if a locked field is touched or a value
    /// is out of range; then stored and put into force (turning the sandbox on runs the
    /// check first and refuses with its reasons).
    pub async fn update(state: &AppState, req: UpdateSandboxSettingsRequest) -> Result<Self, AppError> {
        let current = Self::load(state).await?;
        let numbers: [(&str, Option<u64>); 13] = [
            ("shown", req.shown),
            ("timeout_secs", req.timeout_secs),
            ("memory_mb", req.memory_mb),
            ("processes", req.processes),
            ("cpu_millis", req.cpu_millis),
            ("disk_mb", req.disk_mb),
            ("idle_stop_secs", req.idle_stop_secs),
            ("unused_delete_days", req.unused_delete_days),
            ("max_running", req.max_running),
            ("max_running_per_person", req.max_running_per_person),
            ("max_memory_mb", req.max_memory_mb),
            ("queue_wait_secs", req.queue_wait_secs),
            ("pool_size", req.pool_size),
        ];
        let touched = [
            ("enabled", req.enabled.is_some()),
            ("backend", req.backend.is_some()),
            ("gateway_address", req.gateway_address.is_some()),
            ("gateway_cert_dir", req.gateway_cert_dir.is_some()),
            ("gateway_server_name", req.gateway_server_name.is_some()),
            ("network", req.network.is_some()),
            ("hosts", req.hosts.is_some()),
            ("trusted_egress", req.trusted_egress.is_some()),
        ]
        .into_iter()
        .chain(numbers.iter().map(|(f, v)| (*f, v.is_some())));
        for (field, is_touched) in touched {
            if is_touched && current.locked.iter().any(|l| l == field) {
                return Err(AppError::Conflict(format!(
                    "`{field}` is set by the server's environment and cannot be changed here"
                )));
            }
        }
        let mut pairs: Vec<(String, Option<String>)> = Vec::new();
        for ((field, value), (_, _, min, max)) in numbers.iter().zip(NUMBERS) {
            if let Some(v) = value {
                if !(*min..=*max).contains(v) {
                    return Err(AppError::BadRequest(format!("`{field}` must be between {min} and {max}")));
                }
                pairs.push((key(field), Some(v.to_string())));
            }
        }
        if let Some(hosts) = &req.hosts {
            let hosts = clean_hosts(hosts)?;
            pairs.push((key("hosts"), Some(serde_json::to_string(&hosts).map_err(AppError::internal)?)));
        }
        if let Some(ranges) = &req.trusted_egress {
            let ranges = clean_ranges(ranges)?;
            pairs.push((key("trusted_egress"), Some(serde_json::to_string(&ranges).map_err(AppError::internal)?)));
        }
        if let Some(network) = req.network {
            pairs.push((key("network"), Some(network.as_str().to_owned())));
        }
        if let Some(enabled) = req.enabled {
            pairs.push((key("enabled"), Some(enabled.to_string())));
        }
        if let Some(backend) = req.backend {
            pairs.push((key("backend"), Some(backend.as_str().to_owned())));
        }
        if let Some(address) = &req.gateway_address {
            pairs.push((key("gateway_address"), Some(clean_address(address)?)));
        }
        if let Some(dir) = &req.gateway_cert_dir {
            pairs.push((key("gateway_cert_dir"), Some(clean_cert_dir(dir)?)));
        }
        if let Some(name) = &req.gateway_server_name {
            pairs.push((key("gateway_server_name"), Some(clean_server_name(name)?)));
        }
        let old: Vec<(String, Option<String>)> = {
            let mut old = Vec::new();
            for (k, _) in &pairs {
                old.push((k.clone(), state.store.setting(k).await?));
            }
            old
        };
        write(state, &pairs).await?;
        let next = Self::load(state).await?;
        if next.backend == SandboxBackend::Gateway
            && (next.gateway_address.is_empty() || next.gateway_cert_dir.is_empty())
        {
            write(state, &old).await?;
            return Err(AppError::BadRequest(
                "sandboxes on a gateway need its address and its certificate folder".into(),
            ));
        }
        // Put into force; if the sandbox cannot be turned on, nothing of the change stays.
        if let Err(reason) = state.sandbox.apply(&next).await {
            write(state, &old).await?;
            return Err(AppError::Conflict(reason));
        }
        Ok(next)
    }
}

async fn write(state: &AppState, pairs: &[(String, Option<String>)]) -> Result<(), AppError> {
    let refs: Vec<(&str, Option<String>)> = pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    state.store.set_settings(&refs).await?;
    Ok(())
}

/// Host names: lowercase DNS names, no addresses, no duplicates.
fn clean_hosts(hosts: &[String]) -> Result<Vec<String>, AppError> {
    if hosts.len() > 200 {
        return Err(AppError::BadRequest("at most 200 hosts".into()));
    }
    let mut out: Vec<String> = Vec::new();
    for host in hosts {
        let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            continue;
        }
        if !lens_sandbox::egress::is_host_name(&host) {
            return Err(AppError::BadRequest(format!(
                "`{host}` is not a host name (letters, digits, - and dots; addresses are not allowed)"
            )));
        }
        if !out.contains(&host) {
            out.push(host);
        }
    }
    Ok(out)
}

/// CIDR ranges such as `10.0.0.0/8` or `fd00::/8`.
fn clean_ranges(ranges: &[String]) -> Result<Vec<String>, AppError> {
    if ranges.len() > 100 {
        return Err(AppError::BadRequest("at most 100 ranges".into()));
    }
    let mut out = Vec::new();
    for range in ranges.iter().map(|r| r.trim()).filter(|r| !r.is_empty()) {
        let cidr = lens_sandbox::egress::Cidr::parse(range)
            .ok_or_else(|| AppError::BadRequest(format!("`{range}` is not a CIDR range such as 10.0.0.0/8")))?;
        out.push(cidr.to_string());
    }
    Ok(out)
}

/// A gateway address: `host` or `host:port`, no scheme's path or credentials.
fn clean_address(address: &str) -> Result<String, AppError> {
    let address = address.trim().trim_start_matches("https://").trim_end_matches('/');
    if address.is_empty() {
        return Ok(String::new());
    }
    let host_ok = lens_sandbox::split_gateway_address(address)
        .is_some_and(|(host, _)| lens_sandbox::egress::is_host_name(host) || host.parse::<std::net::IpAddr>().is_ok());
    if !host_ok || address.len() > 300 {
        return Err(AppError::BadRequest(format!("`{address}` is not a gateway address (host or host:port)")));
    }
    Ok(address.to_owned())
}

/// The certificate folder: an absolute path on the server.
fn clean_cert_dir(dir: &str) -> Result<String, AppError> {
    let dir = dir.trim();
    if !dir.is_empty() && (!dir.starts_with('/') || dir.contains('\0') || dir.len() > 4096) {
        return Err(AppError::BadRequest(
            "the certificate folder must be an absolute path on the server, such as /var/lib/lens/openshell".into(),
        ));
    }
    Ok(dir.to_owned())
}

/// The TLS server name: a host name, or nothing.
fn clean_server_name(name: &str) -> Result<String, AppError> {
    let name = name.trim().to_ascii_lowercase();
    if !name.is_empty() && !lens_sandbox::egress::is_host_name(&name) {
        return Err(AppError::BadRequest(format!("`{name}` is not a host name")));
    }
    Ok(name)
}
