//! Starting a sandbox on the gateway: made (or started) and waited for, the agent
//! delivered once, then started in its long-lived exec, and its first frame read.

use std::time::Instant;

use lens_openshell::proto::openshell::{
    sandbox::v1::SandboxPolicy,
    v1::{CreateSandboxRequest, HealthRequest, SandboxSpec, SandboxTemplate, ServiceStatus, StartSandboxRequest},
};

use super::*;
use crate::{ExecRequest, link::read_reply};

/// How long a sandbox may take to become ready: a cold node pulls its image first.
const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// How long the agent may take to say it is confined.
const AGENT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the agent's delivery may take.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(120);

/// Readies the sandbox's home and says where it is, whether the agent is there, and
/// the sandbox's own network settings: its proxy (its programs go out through the
/// gateway's proxy) and the certificates that proxy's TLS is checked with (it ends TLS
/// for every host and names its CA in these variables).
const PREPARE: &str = "mkdir -p workspace .lens && pwd && env | grep -iE \
    '^([a-z_]*_proxy|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|NODE_EXTRA_CA_CERTS|GIT_SSL_CAINFO)=' ; \
    test -x \"$1\"";

/// The agent's file is written in parts, each a command's whole input (a gateway message
/// holds at most 1 MiB), and moved in place after the last: whole or not at all.
const DELIVER_FIRST: &str = "cat > \"$1.part\"";
const DELIVER_MORE: &str = "cat >> \"$1.part\"";
const DELIVER_DONE: &str = "chmod 700 \"$1.part\" && mv \"$1.part\" \"$1\"";

impl GatewayDriver {
    pub(super) async fn start(&self, chat_id: &str, name: &str) -> Result<Arc<Remote>, SandboxError> {
        let settings = self.settings();
        // Room first: Lens never asks the gateway for more than its limits allow.
        let ticket = self
            .admission
            .admit(name, chat_id, settings.limits.memory_bytes, |only| self.stop_idle(name, only))
            .await?;
        let mut client = self.client().await?;
        let (remade, held, sent_at_start) = self.provision(&mut client, chat_id, name, &settings).await?;
        let sent = self.bring_policy_up_to_date(&mut client, name, held).await.or(sent_at_start);
        let (home, proxy_env) = self.prepare(&mut client, name).await?;
        let workspace = format!("{home}/workspace");
        let mut env = settings.limits.sandbox_env(&workspace);
        // The sandbox's own proxy and certificates win over what Lens's settings add.
        env.extend(policy::network_env(settings.network.as_ref(), &proxy_env));
        env.extend(proxy_env);
        let argv = vec![
            format!("{home}/{}", self.agent_file),
            "--root".into(),
            workspace,
            "--max-file-bytes".into(),
            settings.limits.disk_bytes.to_string(),
        ];
        let start = bridge::request(name, &self.options.home, argv, &settings.limits.sandbox_env(&home));
        let mut pipes = bridge::interactive(&mut client, start).await?;
        let first = tokio::time::timeout(AGENT_TIMEOUT, read_reply(&mut pipes.output)).await;
        let fail = |message: String| {
            for task in &pipes.tasks {
                task.abort();
            }
            SandboxError::Unavailable(message)
        };
        match first {
            Ok(Some(Reply::Ready { landlock_abi, landlock_full, seccomp, seccomp_inherited, .. })) => {
                tracing::info!(
                    sandbox = %name, landlock_abi, landlock_full, seccomp, seccomp_inherited,
                    "the sandbox's agent is confined"
                );
                if !seccomp {
                    tracing::warn!(sandbox = %name, seccomp_inherited, "the gateway's sandbox refused the agent's seccomp filter: only its own applies");
                }
            }
            Ok(Some(Reply::Failed { message, .. })) => return Err(fail(message)),
            Ok(_) => return Err(fail("the sandbox's agent ended while starting".into())),
            Err(_) => return Err(fail("the sandbox's agent did not start in time".into())),
        }
        // No proxy frames on a gateway: the agent runs without its proxy there.
        let link = AgentLink::start(pipes.output, pipes.input, |_| {});
        Ok(Arc::new(Remote {
            name: name.to_owned(),
            link,
            tasks: pipes.tasks,
            env,
            tenancy: Tenancy::new(ticket, Arc::default()),
            client,
            run_began: std::sync::Mutex::default(),
            network_on: self.network_on.clone(),
            remade,
            policy: {
                let versions = policy_wait::PolicyVersions::default();
                versions.sent(sent.unwrap_or(0));
                versions
            },
        }))
    }

    /// Makes the sandbox if the gateway has none, starts it if stopped, and waits until
    /// it is ready; `true` when a failed one was made anew, the policy the gateway holds
    /// for it, and the version of the policy sent to it before it started.
    async fn provision(
        &self,
        client: &mut OpenShellClient<Channel>,
        chat_id: &str,
        name: &str,
        settings: &DriverSettings,
    ) -> Result<(bool, Option<SandboxPolicy>, Option<u32>), SandboxError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        // Looked at again soon, then less often: a sandbox that is ready in milliseconds
        // is not kept waiting, one that pulls its image is not asked about a hundred times.
        let mut pause = Duration::from_millis(2);
        let (mut remade, mut sent) = (false, None);
        loop {
            let sandbox = self.get(name).await?;
            let phase = sandbox.as_ref().and_then(|s| s.status.as_ref()).map(|s| s.phase());
            match phase {
                None => self.create(client, chat_id, name, settings).await?,
                Some(SandboxPhase::Ready) => {
                    return Ok((remade, sandbox.and_then(|s| s.spec).and_then(|s| s.policy), sent));
                }
                Some(SandboxPhase::Stopped | SandboxPhase::Completed) => {
                    // Sent before the start: a supervisor fetches the policy the gateway
                    // holds as it starts and reports it loaded at once, where one sent
                    // after would wait for its next poll (ten seconds), and the run with it.
                    // Always sent: the spec holds the policy the sandbox was created with,
                    // not the newest the gateway keeps (a change made while it ran), and
                    // the gateway answers an unchanged policy with its version alone.
                    sent = self.send_policy(client, name, self.policy_of(name)).await.ok().or(sent);
                    let request = StartSandboxRequest {
                        name: name.to_owned(),
                        workspace_scope: workspace_scope(),
                        request_id: uuid::Uuid::new_v4().to_string(),
                    };
                    client
                        .start_sandbox(request)
                        .await
                        .map_err(|s| gateway_error(GatewayError::rpc("StartSandbox", &s)))?;
                }
                Some(SandboxPhase::Error) => {
                    let why = sandbox
                        .and_then(|s| s.status)
                        .and_then(|s| s.conditions.into_iter().find(|c| !c.message.is_empty()))
                        .map(|c| c.message)
                        .unwrap_or_else(|| "no reason given".into());
                    // A sandbox whose container was ended from outside stays in ERROR: the
                    // gateway will neither stop nor start it. It is made afresh, once (its
                    // files went with its container); a fresh one in ERROR is the gateway's.
                    if remade {
                        return Err(SandboxError::Unavailable(format!(
                            "the gateway could not start the sandbox: {why}"
                        )));
                    }
                    tracing::warn!(sandbox = %name, reason = %why, "the gateway's sandbox had failed; making it afresh");
                    remade = true;
                    self.delete_on_gateway(client, name).await?;
                }
                // Provisioning, starting, stopping or being deleted: wait and look again.
                Some(_) => {}
            }
            if Instant::now() >= deadline {
                return Err(SandboxError::Unavailable(format!(
                    "the gateway's sandbox was not ready within {} s",
                    READY_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    async fn create(
        &self,
        client: &mut OpenShellClient<Channel>,
        chat_id: &str,
        name: &str,
        settings: &DriverSettings,
    ) -> Result<(), SandboxError> {
        let labels: HashMap<String, String> =
            [(APP_LABEL.0.to_owned(), APP_LABEL.1.to_owned()), (CHAT_LABEL.to_owned(), chat_id.to_owned())]
                .into_iter()
                .collect();
        let spec = SandboxSpec {
            template: Some(SandboxTemplate {
                image: self.options.image.clone(),
                resources: Some(policy::resources(&settings.limits)),
                ..Default::default()
            }),
            policy: Some(policy::chat_policy(settings.network.as_ref(), &self.options.home, &self.chat_hosts.of(name))),
            ..Default::default()
        };
        let request = CreateSandboxRequest {
            spec: Some(spec),
            name: name.to_owned(),
            labels,
            workspace_scope: workspace_scope(),
            request_id: uuid::Uuid::new_v4().to_string(),
            ..Default::default()
        };
        match client.create_sandbox(request).await {
            Ok(_) => Ok(()),
            // Made meanwhile (another server, or a retry): it is the conversation's.
            Err(s) if s.code() == tonic::Code::AlreadyExists => Ok(()),
            Err(s) => Err(gateway_error(GatewayError::rpc("CreateSandbox", &s))),
        }
    }

    /// Readies the home folder, delivers the agent if it is not there, and returns the
    /// home's real path and the sandbox's network settings.
    async fn prepare(
        &self,
        client: &mut OpenShellClient<Channel>,
        name: &str,
    ) -> Result<(String, Vec<(String, String)>), SandboxError> {
        let home = &self.options.home;
        let script = |s: &str| vec!["sh".into(), "-c".into(), s.into(), "sh".into(), self.agent_file.clone()];
        let prepared =
            bridge::run(client, bridge::request(name, home, script(PREPARE), &[]), &[], CALL_DEADLINE).await?;
        let text = String::from_utf8_lossy(&prepared.stdout).into_owned();
        let mut lines = text.lines();
        let real_home = lines.next().filter(|l| l.starts_with('/')).map(str::to_owned).ok_or_else(|| {
            SandboxError::Unavailable(format!(
                "the sandbox's home {home} could not be made ready: {}",
                String::from_utf8_lossy(&prepared.stderr).trim()
            ))
        })?;
        let proxy_env =
            lines.filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_owned(), v.to_owned())).collect::<Vec<_>>();
        if prepared.code != 0 {
            self.deliver(client, name).await?;
        }
        Ok((real_home, proxy_env))
    }

    /// Sends the current policy to a ready sandbox whose spec holds another (one made
    /// under other settings, found running by a Lens started since). The spec holds the
    /// policy a sandbox was created with, not changes sent to it since; a stopped one is
    /// sent the policy before its start whatever its spec says. The version the gateway
    /// gave it, for the run to wait on; a refusal is logged, and the run goes on under
    /// the old policy.
    async fn bring_policy_up_to_date(
        &self,
        client: &mut OpenShellClient<Channel>,
        name: &str,
        held: Option<SandboxPolicy>,
    ) -> Option<u32> {
        let policy = self.policy_of(name);
        if held.as_ref() == Some(&policy) {
            return None;
        }
        self.send_policy(client, name, policy).await.ok()
    }

    /// Writes the agent into the sandbox, part by part.
    async fn deliver(&self, client: &mut OpenShellClient<Channel>, name: &str) -> Result<(), SandboxError> {
        let home = &self.options.home;
        let script = |s: &str| vec!["sh".into(), "-c".into(), s.into(), "sh".into(), self.agent_file.clone()];
        let parts = self.agent.chunks(bridge::MAX_STDIN).map(Some).chain([None]);
        for (i, part) in parts.enumerate() {
            let (step, input) = match part {
                Some(bytes) if i == 0 => (DELIVER_FIRST, bytes),
                Some(bytes) => (DELIVER_MORE, bytes),
                None => (DELIVER_DONE, &[][..]),
            };
            let done =
                bridge::run(client, bridge::request(name, home, script(step), &[]), input, DELIVERY_TIMEOUT).await?;
            if done.code != 0 {
                return Err(SandboxError::Unavailable(format!(
                    "the sandbox's agent could not be delivered: {}",
                    String::from_utf8_lossy(&done.stderr).trim()
                )));
            }
        }
        Ok(())
    }

    /// Lets go of the sandbox idle longest (a dead one first) to make room for `for_name`.
    pub(super) async fn stop_idle(&self, for_name: &str, only: Option<String>) {
        let Some((name, slot)) = crate::room::idlest(&self.running, for_name, only.as_deref()).await else { return };
        let mut live = slot.lock_owned().await;
        // Looked at again under the lock: a call may have taken it since.
        if crate::room::may_give_way(&live)
            && let Some(taken) = live.take()
        {
            tracing::info!(sandbox = %name, "stopping an idle sandbox to make room for another");
            // Its room is given back here; the gateway stops it in the background.
            taken.release().await;
            self.stop_later(name, live);
        }
    }

    /// Stops sandbox `name` on the gateway in the background, its slot held (`held`)
    /// until the gateway has: a run for that conversation meanwhile starts it afresh
    /// after, and nobody else waits on the container's stop timeout (10 s on the Docker
    /// driver), as a person opening another conversation would.
    pub(super) fn stop_later(&self, name: String, held: tokio::sync::OwnedMutexGuard<Option<Arc<Remote>>>) {
        let Some(driver) = self.me.upgrade() else { return };
        let task = tokio::spawn(async move {
            if let Err(e) = driver.stop_on_gateway(&name).await {
                tracing::warn!(sandbox = %name, error = %e, "a sandbox could not be stopped on the gateway");
            }
            drop(held);
        });
        if let Ok(mut stopping) = self.stopping.lock() {
            stopping.retain(|t| !t.is_finished());
            stopping.push(task);
        }
    }
}

/// Connects, asks `Health`, and creates, runs and deletes a test sandbox.
pub(super) async fn check(options: &GatewayOptions) -> Result<GatewayCheck, SandboxError> {
    let began = Instant::now();
    let mut client = lens_openshell::connect(&options.gateway).await.map_err(gateway_error)?;
    let health = client.health(HealthRequest {}).await.map_err(|s| gateway_error(GatewayError::rpc("Health", &s)))?;
    let health = health.into_inner();
    let round_trip_ms = began.elapsed().as_millis() as u64;
    if health.status() != ServiceStatus::Healthy {
        return Err(SandboxError::Unavailable(format!(
            "the gateway (version {}) says it is {}",
            health.version,
            health.status().as_str_name().trim_start_matches("SERVICE_STATUS_").to_lowercase()
        )));
    }
    let began = Instant::now();
    let settings = DriverSettings {
        limits: crate::Limits::default(),
        admission: crate::AdmissionLimits {
            max_running: 1,
            max_memory_bytes: u64::MAX,
            wait: Duration::from_secs(1),
            per_person: 1,
        },
        pool_size: 0,
        network: None,
    };
    let driver = GatewayDriver::new(options.clone(), &settings)?;
    let chat = crate::name::check_id();
    let chat = chat.as_str();
    let ran = async {
        let request =
            ExecRequest { argv: vec!["true".into()], env: Default::default(), timeout: Duration::from_secs(30) };
        let run = driver.exec(chat, request).await?;
        crate::run_to_end(run).await
    }
    .await;
    let deleted = driver.delete(chat).await;
    ran?;
    deleted?;
    Ok(GatewayCheck { version: health.version, round_trip_ms, sandbox_ms: began.elapsed().as_millis() as u64 })
}
