//! Driving one sandbox run into a step: live output as it comes, then the captured
//! output for the person and the text for the model.

use std::{
    future::Future,
    sync::Arc,
    time::{Duration, Instant},
};

use futures_util::StreamExt;
use lens_sandbox::{FileEntry, OutputCapture, RunEvent, RunStream, SandboxDriver, SandboxError};
use lens_types::{MadeFile, RunEnding, RunOutput, SharedFileRef};

use super::{OutputSink, ToolContext, ToolOutcome, live_output::LiveOutput, run_log::RunLog};
use crate::{
    files::{
        FileError, Files,
        names::{INLINE_IMAGE_MAX, is_inline_image, mime_for},
    },
    store::FileKind,
};

/// Where a run happens and what it may do: the conversation's sandbox, the files (its
/// vault for images and logs, the person's uploads) and the run settings in force.
#[derive(Clone)]
pub struct RunPlace {
    pub files: Files,
    pub driver: Arc<dyn SandboxDriver>,
    pub chat_id: String,
    pub settings: RunSettings,
}

/// What a run tool holds: the sandbox driver, the files (vaults and the rows listing
/// them) and the run settings in force.
#[derive(Clone)]
pub struct RunTool {
    pub driver: Arc<dyn SandboxDriver>,
    pub settings: RunSettings,
    pub files: Files,
}

impl RunTool {
    /// Where a run of conversation `chat_id` happens.
    pub fn place(&self, chat_id: &str) -> RunPlace {
        RunPlace {
            files: self.files.clone(),
            driver: self.driver.clone(),
            chat_id: chat_id.to_owned(),
            settings: self.settings.clone(),
        }
    }
}

/// Images a run made that are shown inline, at most this many per run.
const INLINE_IMAGES_PER_RUN: usize = 4;

/// Limits of every run.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub timeout: Duration,
    /// Characters of stdout (its start) and stderr (its end) a person sees.
    pub shown: usize,
    /// What the sandbox may reach (the tools tell the model).
    pub network: lens_types::NetworkMode,
    /// The sandbox's memory and disk, for the tools' descriptions.
    pub memory_mb: u64,
    pub disk_mb: u64,
    /// Whether people may allow hosts for their own conversation.
    pub people_allow_hosts: bool,
    /// When the person's groups let them reach less than the site: the only hosts of the
    /// site's list their sandbox may reach (none: no network), and why.
    pub within: Option<(Vec<String>, String)>,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            shown: 4000,
            network: lens_types::NetworkMode::Off,
            memory_mb: 1024,
            disk_mb: 1024,
            people_allow_hosts: false,
            within: None,
        }
    }
}

impl RunSettings {
    /// The limits, as the tools' descriptions tell the model.
    pub fn limits_note(&self) -> String {
        format!(
            "Each run stops after {} s; the sandbox has {} MiB of memory and {} MiB of disk.",
            self.timeout.as_secs(),
            self.memory_mb,
            self.disk_mb
        )
    }

    /// The sentence about the network in the tools' descriptions.
    pub fn network_note(&self) -> &'static str {
        match self.network {
            lens_types::NetworkMode::Off => "There is no network.",
            lens_types::NetworkMode::Registries => {
                "The network reaches only the package registries: `pip install` and `npm install` work (into \
                 /workspace); nothing else does."
            }
            lens_types::NetworkMode::Hosts => {
                "The network reaches only the package registries and a few hosts an admin allowed, over HTTPS."
            }
        }
    }
}

/// The first line of some code, for a step's summary.
pub fn first_line(code: &str) -> String {
    let line = code.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let short: String = line.chars().take(60).collect();
    if short.len() < line.len() || code.trim().lines().count() > 1 { format!("{short}…") } else { short }
}

/// What `run_python` and `run_bash` share: the call's attachments are placed, the run
/// is started (`start` is not polled before that) and followed to its end, and the output
/// of a run that could reach the network counts as outside text.
pub async fn run_call(
    place: &RunPlace,
    ctx: &ToolContext,
    args: &serde_json::Value,
    (language, code): (&str, &str),
    live: &OutputSink,
    start: impl Future<Output = Result<RunStream, SandboxError>>,
) -> ToolOutcome {
    if let Err(e) = place_attachments(place, ctx.user_id, args).await {
        return ToolOutcome::failed(e.to_string());
    }
    // The hosts the conversation's owner allowed, as the store has them now (another
    // replica may have added one), or none when the admin no longer lets people.
    let hosts = match place.settings.people_allow_hosts {
        true => place.files.store.allowed_hosts(&place.chat_id).await.unwrap_or_default(),
        false => Vec::new(),
    };
    let within = place.settings.within.clone();
    place.driver.set_chat_network_for_run(&place.chat_id, lens_sandbox::ChatNetwork { hosts, within }).await;
    match wait_in_line(place, live, start).await {
        Ok(stream) => {
            let outcome = follow(stream, language, code, live, ctx.stop.clone(), place).await;
            note_network_output(place).await;
            outcome
        }
        Err(e) => ToolOutcome::failed(e.to_string()),
    }
}

/// Starts the run; while its sandbox waits for room, the person sees its place in line
/// (live only: the step's output is the run's own).
async fn wait_in_line(
    place: &RunPlace,
    live: &OutputSink,
    start: impl Future<Output = Result<RunStream, SandboxError>>,
) -> Result<RunStream, SandboxError> {
    tokio::pin!(start);
    let (mut shown, mut settling_shown) = (None, false);
    loop {
        tokio::select! {
            started = &mut start => return started,
            _ = tokio::time::sleep(Duration::from_millis(500)) => {
                let now = place.driver.queued(&place.chat_id).await;
                if let Some(n) = now
                    && now != shown
                {
                    let text = format!("[waiting for a free sandbox: place {n} in line]\n");
                    let _ = live.send((lens_types::OutputStream::Stdout, text));
                }
                shown = now;
                if !settling_shown && place.driver.settling(&place.chat_id).await {
                    settling_shown = true;
                    let text = "[waiting for the sandbox to put the new network settings into force]\n".to_owned();
                    let _ = live.send((lens_types::OutputStream::Stdout, text));
                }
            }
        }
    }
}

/// Follows a run to its ending.
async fn follow(
    mut run: RunStream,
    language: &str,
    code: &str,
    live: &OutputSink,
    mut stop: tokio::sync::watch::Receiver<bool>,
    place: &RunPlace,
) -> ToolOutcome {
    let started = Instant::now();
    let mut capture = OutputCapture::new();
    let mut ending = RunEnding::Killed { signal: 0 };
    let mut files: Vec<FileEntry> = Vec::new();
    let mut network = Vec::new();
    let mut network_soon = None;
    let mut log = RunLog::new(place.files.shared.clone(), &place.chat_id, place.files.limits.share_max_mb << 20);
    let mut live_budget = LiveOutput::new(place.settings.shown);
    loop {
        let event = tokio::select! {
            event = run.next() => event,
            // Dropping the run kills it; what it printed so far is kept.
            _ = stop.wait_for(|s| *s) => {
                ending = RunEnding::CutShort;
                break;
            }
        };
        let Some(event) = event else { break };
        match event {
            RunEvent::Output { stream, bytes } => {
                log.push(&bytes);
                let text = live_budget.pass(stream, capture.push(stream, &bytes));
                if !text.is_empty() {
                    let _ = live.send((stream, text));
                }
            }
            RunEvent::Ended(e) => {
                ending = e;
                break;
            }
            RunEvent::Files(made) => files = made,
            RunEvent::Network(reached) => network = reached,
            RunEvent::NetworkSoon(soon) => network_soon = Some(soon),
            RunEvent::Failed(message) => return ToolOutcome::failed(message),
        }
    }
    let ok = ending.is_success();
    let run = capture.finish(language, code, ending, started.elapsed().as_millis() as u64, place.settings.shown);
    let mut output = run.output;
    output.files = files.iter().map(|f| MadeFile { path: f.path.clone(), size: f.size, shared: None }).collect();
    output.images = keep_images(place, &files).await;
    let people_allow = place.settings.people_allow_hosts;
    output.network = allowable_where(people_allow, network);
    let network_soon = network_soon.map(|soon| soon.map(move |n| allowable_where(people_allow, n)));
    let cut = output.stdout_cut || output.stderr_cut;
    output.log = keep_log(place, log, cut, &output).await;
    ToolOutcome { ok, cut: run.cut_for_model, result: run.for_model, output: Some(output), file: None, network_soon }
}

/// A refused host is the person's to allow only where the admin lets people.
fn allowable_where(people_allow: bool, mut network: Vec<lens_types::NetReach>) -> Vec<lens_types::NetReach> {
    network.iter_mut().for_each(|r| r.allowable &= people_allow);
    network
}

/// Whether a run must ask first: the sandbox reaches the network and text the person did
/// not write is in the conversation (it could be instructions planted for the model).
/// On a database error it asks: the safe side.
pub async fn approval_question(place: &RunPlace, language: &str) -> Option<String> {
    if place.settings.network == lens_types::NetworkMode::Off {
        return None;
    }
    match place.files.store.has_outside_text(&place.chat_id).await {
        Ok(false) => None,
        _ => Some(format!(
            "Run this {language} code? Text you did not write (an attachment, a page or a networked run's output) \
             is in this conversation, and the sandbox can reach the network."
        )),
    }
}

/// After a run that could reach the network, its output counts as outside text.
async fn note_network_output(place: &RunPlace) {
    if place.settings.network != lens_types::NetworkMode::Off
        && let Err(e) = place.files.store.mark_outside_text(&place.chat_id).await
    {
        tracing::warn!(error = %e, "marking outside text failed");
    }
}

/// The `attachments` parameter the run tools share.
pub fn attachments_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "array",
        "items": {"type": "string"},
        "description": "ids of the person's attached files, placed under /workspace/attachments/ before the run",
    })
}

/// Places the attachments a call names under `/workspace/attachments/<name>`. Only the
/// asker's own uploads in this conversation are taken; any other id is a clear error.
async fn place_attachments(place: &RunPlace, user_id: i64, args: &serde_json::Value) -> Result<(), FileError> {
    let Some(ids) = args.get("attachments") else { return Ok(()) };
    let ids: Vec<String> = serde_json::from_value(ids.clone()).map_err(|_| FileError::NotAList("attachments"))?;
    for id in ids {
        let store = &place.files.store;
        let file = store.chat_upload(user_id, &place.chat_id, &id).await?.ok_or(FileError::NotAttached(id))?;
        // Part by part from the vault into the sandbox: any size, a few parts in memory.
        let source = place.files.uploads.read_stream(&user_id.to_string(), &file.id);
        let path = format!("attachments/{}", file.name);
        lens_sandbox::copy_in(&*place.driver, &place.chat_id, &path, source).await.map_err(FileError::Sandbox)?;
    }
    Ok(())
}

/// Copies the images a run made (small enough to show) into the vault.
async fn keep_images(place: &RunPlace, files: &[FileEntry]) -> Vec<SharedFileRef> {
    let mut images = Vec::new();
    let shown = files.iter().filter(|f| is_inline_image(mime_for(&f.path)) && f.size <= INLINE_IMAGE_MAX);
    for f in shown.take(INLINE_IMAGES_PER_RUN) {
        match place.files.share(&*place.driver, &place.chat_id, &f.path, None, FileKind::Image).await {
            Ok(image) => images.push(image),
            Err(e) => tracing::warn!(path = %f.path, error = %e, "keeping a run's image failed"),
        }
    }
    images
}

/// Keeps the whole output when the step's was cut.
async fn keep_log(place: &RunPlace, log: RunLog, cut: bool, output: &RunOutput) -> Option<SharedFileRef> {
    let (id, size) = log.finish(cut).await?;
    if let Err(full) = place.files.room_for_one_more(&place.chat_id).await {
        tracing::info!(reason = %full, "a run's log was not kept");
        let _ = place.files.shared.delete(&place.chat_id, &id).await;
        return None;
    }
    let name = format!("{}-run-output.log", output.language);
    let file = SharedFileRef { id, name, size, mime: "text/plain".into() };
    match place.files.record(&place.chat_id, &file, FileKind::Log, &[]).await {
        Ok(()) => Some(file),
        Err(e) => {
            tracing::info!(reason = %e, "a run's log was not kept");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tools_tell_the_model_the_limits_and_the_network() {
        let mut s =
            RunSettings { timeout: Duration::from_secs(30), memory_mb: 512, disk_mb: 256, ..Default::default() };
        assert_eq!(
            s.limits_note(),
            "Each run stops after 30 s; the sandbox has 512 MiB of memory and 256 MiB of disk."
        );
        assert_eq!(s.network_note(), "There is no network.");
        s.network = lens_types::NetworkMode::Registries;
        assert!(s.network_note().contains("`pip install`"));
    }
}
