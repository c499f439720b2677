//! The sandbox tools through the whole server: Direct mode runs fenced code in the real
//! local sandbox, and the steps carry what ran and how it ended.

use std::time::Duration;

use lens_types::{MessageStatus, MessageView, OutputStream, RunEnding, StepStatus, StreamEvent};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::{Client, TestApp};

async fn answer(admin: &Client, cid: &str, text: &str) -> (Vec<(String, StreamEvent)>, MessageView) {
    let aid = admin.ask(cid, text).await;
    let events = admin.events(cid, &aid, None, 10_000).await;
    let Some((_, StreamEvent::Done { message })) = events.last().cloned() else { panic!("no done: {events:?}") };
    (events, message)
}

#[tokio::test]
async fn direct_mode_runs_fenced_python_and_shows_its_output() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let (events, message) = answer(&admin, &cid, "```python\nprint(6 * 7)\n```").await;
    let live: String = events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::Output { stream: OutputStream::Stdout, text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(live, "42\n", "the output streams live");
    assert_eq!(message.status, MessageStatus::Complete);
    assert_eq!(message.text, "Ran 1 code block; its output is below.");
    let step = &message.steps[0];
    assert_eq!(
        (step.tool.as_str(), step.status, step.summary.as_str()),
        ("run_python", StepStatus::Succeeded, "Run Python: print(6 * 7)")
    );
    let output = step.output.as_ref().unwrap();
    assert_eq!((output.stdout.as_str(), output.code.as_str()), ("42\n", "print(6 * 7)"));
    assert_eq!(output.ending, RunEnding::Exited { code: 0 });
}

#[tokio::test]
async fn a_data_directory_inside_a_private_folder_runs_code() {
    use std::os::unix::fs::PermissionsExt;
    let app = TestApp::builder().data_dir_in_private_folder().sandbox().settings_model().await;
    let mode = std::fs::metadata(app.dir.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the data directory's parent stays private");
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let (_, message) =
        answer(&admin, &cid, "```python\nopen('kept.txt', 'w').write('in the workspace')\nprint(6 * 7)\n```").await;
    let output = message.steps[0].output.as_ref().unwrap();
    assert_eq!((output.stdout.as_str(), &output.ending), ("42\n", &RunEnding::Exited { code: 0 }), "{output:?}");
    let (_, message) = answer(&admin, &cid, "```bash\ncat kept.txt\n```").await;
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "in the workspace", "the workspace keeps its files");
}

#[tokio::test]
async fn a_failing_command_shows_its_stderr_and_exit_code_and_names_persist() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let (_, message) = answer(&admin, &cid, "```bash\necho fine; echo broken >&2; exit 3\n```").await;
    let step = &message.steps[0];
    assert_eq!(step.status, StepStatus::Failed);
    let output = step.output.as_ref().unwrap();
    assert_eq!((output.stdout.as_str(), output.stderr.as_str()), ("fine\n", "broken\n"));
    assert_eq!(output.ending, RunEnding::Exited { code: 3 });

    answer(&admin, &cid, "```python\ntotal = 40\n```").await;
    let (_, message) =
        answer(&admin, &cid, "two steps:\n```python\ntotal += 2\nprint(total)\n```\n```bash\nls\n```").await;
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "42\n");
    assert_eq!(message.steps.len(), 2);
}

#[tokio::test]
async fn a_run_that_takes_too_long_is_stopped_and_says_so() {
    let app = TestApp::builder()
        .sandbox()
        .config(|c| c.sandbox_numbers.set(lens_types::SandboxNumber::TimeoutSecs, 1))
        .settings_model()
        .await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let (_, message) = answer(&admin, &cid, "```python\nimport time\nprint('start')\ntime.sleep(30)\n```").await;
    let output = message.steps[0].output.as_ref().unwrap();
    assert_eq!(output.ending, RunEnding::TimedOut { after_ms: 1000 });
    assert_eq!(output.stdout, "start\n");
    assert!(output.stderr.contains("KeyboardInterrupt"));
}

#[tokio::test]
async fn stop_during_a_long_run_kills_it() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "```bash\necho begun; sleep 60\n```").await;
    // Wait for the run's first output, then press Stop.
    let first = admin.events(&cid, &aid, None, 2).await;
    assert!(matches!(first[1].1, StreamEvent::Output { .. }), "{first:?}");
    let (status, _) = admin.post(&format!("/api/v1/chats/{cid}/answers/{aid}/stop"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let rest =
        tokio::time::timeout(Duration::from_secs(10), admin.events(&cid, &aid, Some(&first[1].0), 1000)).await.unwrap();
    let Some((_, StreamEvent::Done { message })) = rest.last() else { panic!() };
    assert_eq!(message.status, MessageStatus::Stopped);
    assert_eq!(message.steps[0].status, StepStatus::Failed);
    let output = message.steps[0].output.as_ref().expect("the stopped run keeps its output");
    assert_eq!((output.stdout.as_str(), &output.ending), ("begun\n", &RunEnding::CutShort));
    // The sleeper is gone: the next run in the sandbox finds none.
    let (_, message) = answer(&admin, &cid, "```bash\nps -e -o comm= | grep -c sleep || true\n```").await;
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "0\n", "{message:?}");
}

/// Where a conversation's workspace is mounted now, if it is.
fn mounted_workspace(cid: &str) -> Option<std::path::PathBuf> {
    let end = format!("/lens-chat-{cid}");
    let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    table.lines().filter_map(|l| l.split(' ').nth(4)).find(|p| p.ends_with(&end)).map(Into::into)
}

#[tokio::test]
async fn deleting_a_conversation_deletes_its_sandbox() {
    // No pre-started sandbox: one taken from the pool keeps the pool's mount point until it
    // stops, so whether the workspace is found under the conversation's name would depend
    // on whether the pool was ready (a clean-clone run once found it was).
    let app = TestApp::builder()
        .sandbox()
        .config(|c| c.sandbox_numbers.set(lens_types::SandboxNumber::PoolSize, 0))
        .settings_model()
        .await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let (_, message) = answer(&admin, &cid, "```bash\necho kept > notes.txt\n```").await;
    let workspace = mounted_workspace(&cid).expect("the workspace is mounted while its sandbox runs");
    let image = app.dir.path().join("sandboxes").join(format!("lens-chat-{cid}.img"));
    // The answer is printed when the file is missing: a clean-clone run once found it so.
    assert!(workspace.join("notes.txt").is_file() && image.is_file(), "{message:?}");
    assert_eq!(admin.delete(&format!("/api/v1/chats/{cid}")).await.0, StatusCode::NO_CONTENT);
    assert!(!workspace.exists() && !image.exists());
    assert_eq!(mounted_workspace(&cid), None);
}

#[tokio::test]
async fn a_flood_streams_a_bounded_head_and_the_step_keeps_its_size() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let (events, message) =
        answer(&admin, &cid, "```bash\nyes | head -c 50000000; yes no | head -c 4999998 >&2\n```").await;
    let live: usize = events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::Output { text, .. } => Some(text.len()),
            _ => None,
        })
        .sum();
    // What the answer keeps in memory and hands every tab that joins: the heads, not 55 MB.
    assert!(live < 20_000, "{live} bytes of live output");
    assert!(
        events.iter().any(|(_, e)| matches!(e, StreamEvent::Output { text, .. } if text.contains("[… more output")))
    );
    let late = admin.events(&cid, &message.id, None, 10_000).await;
    assert!(late.len() <= events.len(), "a late tab gets the same bounded replay");
    let output = message.steps[0].output.as_ref().unwrap();
    assert_eq!((output.stdout_bytes, output.stderr_bytes), (50_000_000, 4_999_998));
    assert!(output.stdout.starts_with("y\ny\n") && output.stderr.ends_with("no\n"));
    assert!(output.log.is_some(), "the whole output is kept as the run's log");
    // The step says what the model read of it: the heads, cut to fit, about 3k tokens
    // of the default 32k context.
    let used = message.steps[0].context.expect("the step's share of the context");
    assert!(used.cut && (2_500..=3_200).contains(&used.tokens) && used.window == 32_768, "{used:?}");
    assert!(used.describe().ends_with("of the model's context (9%), cut to fit"), "{}", used.describe());

    // A small run's whole output went to the model.
    let (_, message) = answer(
        &admin,
        &cid,
        "```bash
echo small
```",
    )
    .await;
    let used = message.steps[0].context.unwrap();
    assert!(!used.cut && used.tokens < 40, "{used:?}");
}

#[tokio::test]
async fn kill_minus_one_then_the_next_run_in_the_conversation_prints_ok() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    answer(&admin, &cid, "```bash\nkill -9 -1; echo after\n```").await;
    let (_, message) = answer(&admin, &cid, "```bash\necho ok\n```").await;
    let output = message.steps[0].output.as_ref().unwrap();
    assert_eq!((output.stdout.as_str(), &output.ending), ("ok\n", &RunEnding::Exited { code: 0 }), "{}", output.stderr);
}

/// The host's OOM kills so far, of any kind (`/proc/vmstat`).
fn oom_kills() -> u64 {
    let vmstat = std::fs::read_to_string("/proc/vmstat").unwrap();
    vmstat.lines().find_map(|l| l.strip_prefix("oom_kill ")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

#[tokio::test]
async fn forty_conversations_asking_for_900_mb_at_once_never_overcommit_the_host() {
    let app = TestApp::builder()
        .sandbox()
        .config(|c| {
            c.sandbox_numbers.set(lens_types::SandboxNumber::MaxMemoryMb, 4096);
            c.sandbox_numbers.set(lens_types::SandboxNumber::QueueWaitSecs, 600);
            // One person asks all forty: the per-person limits are not what is tested here.
            c.answers_per_person = 40;
            c.sandbox_numbers.set(lens_types::SandboxNumber::MaxRunningPerPerson, 40);
        })
        .settings_model()
        .await;
    let admin = app.admin().await;
    let before = oom_kills();
    // /healthz is asked all along; the slowest answer is kept.
    let slowest = std::sync::Arc::new(std::sync::Mutex::new(Duration::ZERO));
    let health = {
        let (base, slowest) = (app.base.clone(), slowest.clone());
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            loop {
                let start = std::time::Instant::now();
                let status = http.get(format!("{base}/healthz")).send().await.map(|r| r.status());
                assert!(status.is_ok_and(|s| s.is_success()), "/healthz answers");
                let took = start.elapsed();
                if let Ok(mut s) = slowest.lock() {
                    *s = (*s).max(took);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let mut chats = Vec::new();
    for _ in 0..40 {
        let cid = admin.new_chat().await;
        admin.ask(&cid, "```python\nx = b'x' * 900_000_000\nprint(len(x))\n```").await;
        chats.push(cid);
    }
    let mut endings = Vec::new();
    for cid in &chats {
        let deadline = std::time::Instant::now() + Duration::from_secs(300);
        let answer = loop {
            let (_, body) = admin.get(&format!("/api/v1/chats/{cid}")).await;
            let detail: lens_types::ChatDetail = serde_json::from_value(body).unwrap();
            let last = detail.messages.last().cloned().unwrap();
            if last.status != MessageStatus::Streaming {
                break last;
            }
            assert!(std::time::Instant::now() < deadline, "every answer ends");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let output = answer.steps[0].output.clone().expect("every run has its output");
        endings.push((output.ending, output.stdout));
    }
    health.abort();
    assert!(!health.await.unwrap_err().is_panic(), "/healthz always answered");
    let slowest = *slowest.lock().unwrap();
    assert!(slowest < Duration::from_secs(1), "/healthz took {slowest:?} at worst");
    assert!(
        endings.iter().all(|(e, out)| *e == RunEnding::Exited { code: 0 } && out == "900000000\n"),
        "each run had its memory and ended: {endings:?}"
    );
    assert_eq!(oom_kills(), before, "no process on the host was killed for memory");
}

/// Follows an answer's events until its output contains `needle`.
async fn until_output(client: &Client, cid: &str, aid: &str, needle: &str) {
    let mut seen: Vec<(String, StreamEvent)> = Vec::new();
    loop {
        let printed = seen.iter().any(|(_, e)| matches!(e, StreamEvent::Output { text, .. } if text.contains(needle)));
        if printed {
            return;
        }
        assert!(!matches!(seen.last(), Some((_, StreamEvent::Done { .. }))), "{needle:?} never came: {seen:?}");
        let last = seen.last().map(|(id, _)| id.clone());
        seen.extend(client.events(cid, aid, last.as_deref(), 1).await);
    }
}

#[tokio::test]
async fn one_persons_queue_does_not_stand_before_another_persons_run() {
    // Two sandboxes at once, both of which one person may hold: A fills the host and
    // queues one more; B's run goes when one of A's gives way, before A's queued one.
    let app = TestApp::builder()
        .sandbox()
        .config(|c| {
            c.sandbox_numbers.set(lens_types::SandboxNumber::MaxRunning, 2);
            c.sandbox_numbers.set(lens_types::SandboxNumber::MaxRunningPerPerson, 2);
            c.sandbox_numbers.set(lens_types::SandboxNumber::PoolSize, 0);
        })
        .settings_model()
        .await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let (short, long, queued) = (admin.new_chat().await, admin.new_chat().await, admin.new_chat().await);
    let short_answer = admin.ask(&short, "```bash\necho started; sleep 4\n```").await;
    until_output(&admin, &short, &short_answer, "started").await;
    let long_answer = admin.ask(&long, "```bash\necho started; sleep 600\n```").await;
    until_output(&admin, &long, &long_answer, "started").await;
    let queued_answer = admin.ask(&queued, "```bash\necho started\n```").await;
    until_output(&admin, &queued, &queued_answer, "[waiting for a free sandbox: place 1 in line]").await;
    let bobs = bob.new_chat().await;
    let (queued_started, ((events, message), bob_done)) = tokio::join!(
        async {
            until_output(&admin, &queued, &queued_answer, "started").await;
            std::time::Instant::now()
        },
        async { (answer(&bob, &bobs, "```bash\necho mine\n```").await, std::time::Instant::now()) }
    );
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "mine\n", "{events:?}");
    let waited_for =
        events.iter().any(|(_, e)| matches!(e, StreamEvent::Output { text, .. } if text.contains("place 1 in line")));
    assert!(waited_for, "B waited first in line, ahead of A's queued run: {events:?}");
    assert!(bob_done < queued_started, "B's run ended before A's queued run began");
    admin.post(&format!("/api/v1/chats/{long}/answers/{long_answer}/stop"), json!({})).await;
}

#[tokio::test]
async fn a_run_waiting_for_a_free_sandbox_shows_its_place_then_runs() {
    let app = TestApp::builder()
        .sandbox()
        .config(|c| c.sandbox_numbers.set(lens_types::SandboxNumber::MaxRunning, 1))
        .settings_model()
        .await;
    let admin = app.admin().await;
    let busy = admin.new_chat().await;
    let busy_answer = admin.ask(&busy, "```bash\necho started; sleep 3\n```").await;
    // The busy run is under way (it printed) before the next asks.
    let mut seen = Vec::new();
    while !seen.iter().any(|(_, e)| matches!(e, StreamEvent::Output { text, .. } if text.contains("started"))) {
        let last = seen.last().map(|(id, _): &(String, StreamEvent)| id.clone());
        seen.extend(admin.events(&busy, &busy_answer, last.as_deref(), 1).await);
    }
    let next = admin.new_chat().await;
    let (events, message) = answer(&admin, &next, "```bash\necho mine\n```").await;
    let live: String = events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::Output { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(live.contains("[waiting for a free sandbox: place 1 in line]"), "{live}");
    let output = message.steps[0].output.as_ref().unwrap();
    assert_eq!(output.stdout, "mine\n", "the step shows the run's own output");
}

#[tokio::test]
async fn a_conversations_sandbox_shows_how_it_stands_and_delete_takes_its_files_not_the_conversation() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = admin.new_chat().await;
    let url = format!("/api/v1/chats/{cid}/sandbox");
    let view = |body: serde_json::Value| serde_json::from_value::<lens_types::ChatSandboxView>(body).unwrap();

    // No run yet: none.
    let (status, body) = admin.get(&url).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(view(body).state, lens_types::ChatSandboxState::Absent);

    // After a run: running, its files counted, and when it goes if unused: stopped after
    // the idle time, deleted the unused days after that.
    let (_, message) = answer(&admin, &cid, "```bash\nhead -c 300000 /dev/urandom > kept.bin && echo made\n```").await;
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "made\n");
    let (_, body) = admin.get(&url).await;
    let running = view(body);
    assert_eq!((running.state, running.busy), (lens_types::ChatSandboxState::Running, false));
    assert!(running.disk_bytes >= 300_000, "{running:?}");
    let (_, settings) = admin.get("/api/v1/admin/sandbox").await;
    let (idle, days) = (settings["idle_stop_secs"].as_i64().unwrap(), settings["unused_delete_days"].as_i64().unwrap());
    let last_used = running.last_used_at.unwrap();
    assert!((lens_server::now_ms() - last_used).abs() < 120_000, "{running:?}");
    assert_eq!(running.deletes_at, Some(last_used + idle * 1000 + days * 86_400_000));

    // Someone else's: 404 both ways, and nothing changes.
    assert_eq!(bob.get(&url).await.0, StatusCode::NOT_FOUND);
    assert_eq!(bob.delete(&url).await.0, StatusCode::NOT_FOUND);

    // Not while an answer is being written in the conversation.
    let aid = admin.ask(&cid, "```bash\nsleep 3; echo late\n```").await;
    let (status, body) = admin.delete(&url).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("stop it first"), "{body}");
    admin.done_after(&cid, &aid, "0").await;

    // Deleted: gone with its files; the conversation stays and its next run starts afresh.
    assert_eq!(admin.delete(&url).await.0, StatusCode::NO_CONTENT);
    assert_eq!(view(admin.get(&url).await.1).state, lens_types::ChatSandboxState::Absent);
    let (_, message) = answer(&admin, &cid, "```bash\nls -a; test -e kept.bin || echo gone\n```").await;
    assert!(message.steps[0].output.as_ref().unwrap().stdout.contains("gone"), "{message:?}");
    let (status, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(chat["messages"].as_array().unwrap().len(), 6, "every message kept");
    // Deleting none is fine too.
    assert_eq!(
        admin.delete(&format!("/api/v1/chats/{}/sandbox", admin.new_chat().await)).await.0,
        StatusCode::NO_CONTENT
    );

    // With the sandbox off, it says so.
    let off = TestApp::new().await;
    let someone = off.admin().await;
    let cid = someone.new_chat().await;
    let (_, body) = someone.get(&format!("/api/v1/chats/{cid}/sandbox")).await;
    assert_eq!(view(body).state, lens_types::ChatSandboxState::Off);
}

#[tokio::test]
async fn the_workspace_browser_lists_folders_sizes_dates_and_the_run_that_made_each_file() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = admin.new_chat().await;
    let url = |folder: &str| format!("/api/v1/chats/{cid}/sandbox/files?path={folder}");
    let listing = |body: serde_json::Value| serde_json::from_value::<lens_types::WorkspaceListing>(body).unwrap();

    // No sandbox yet: nothing, and looking does not make one.
    let (status, body) = admin.get(&url("")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(listing(body).entries.is_empty());
    let (_, state) = admin.get(&format!("/api/v1/chats/{cid}/sandbox")).await;
    assert_eq!(state["state"], "absent");

    let started = lens_server::now_ms();
    answer(&admin, &cid, "```bash\nmkdir -p out/charts && printf 'a,b\\n1,2\\n' > data.csv && head -c 2500 /dev/zero > out/charts/c.bin\n```").await;
    let (_, second) = answer(&admin, &cid, "```python\nopen('data.csv', 'a').write('3,4\\n')\n```").await;

    // The workspace: the folder first, then the file; the file's size, date and maker.
    let (_, body) = admin.get(&url("")).await;
    let top = listing(body);
    let names: Vec<(&str, bool)> = top.entries.iter().map(|e| (e.name.as_str(), e.is_dir)).collect();
    assert_eq!(names, [("out", true), ("data.csv", false)], "{top:?}");
    let csv = &top.entries[1];
    assert_eq!((csv.path.as_str(), csv.size), ("data.csv", 12));
    let changed = csv.modified_at.expect("a date");
    assert!(changed >= started - 5_000 && changed <= lens_server::now_ms() + 5_000, "{csv:?}");
    let by = csv.made_by.as_ref().expect("a run made it");
    assert_eq!((by.message_id.as_str(), by.step_id.as_str(), by.run), (second.id.as_str(), "s1", 2), "the latest run");

    // Down a folder, with its path as asked, slashes or not.
    let (_, body) = admin.get(&url("out/charts/")).await;
    let deep = listing(body);
    assert_eq!(deep.path, "out/charts");
    assert_eq!(deep.entries.len(), 1);
    assert_eq!((deep.entries[0].path.as_str(), deep.entries[0].size), ("out/charts/c.bin", 2500));
    assert_eq!(deep.entries[0].made_by.as_ref().map(|b| b.run), Some(1));

    // A file shared from the browser downloads byte for byte.
    let (status, shared) = admin.post(&format!("/api/v1/chats/{cid}/files"), json!({"path": "out/charts/c.bin"})).await;
    assert_eq!(status, StatusCode::CREATED, "{shared}");
    let download = format!("/api/v1/chats/{cid}/files/{}", shared["id"].as_str().unwrap());
    let resp = admin.request(reqwest::Method::GET, &download).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.bytes().await.unwrap().as_ref(), [0u8; 2500]);

    // Bad paths get a sentence and nothing else; another person gets 404.
    for (bad, code) in [
        ("nope", StatusCode::NOT_FOUND),
        ("../..", StatusCode::BAD_REQUEST),
        // A leading slash names the workspace's own `etc`, which it does not hold.
        ("/etc", StatusCode::NOT_FOUND),
        ("data.csv", StatusCode::NOT_FOUND),
    ] {
        let (status, body) = admin.get(&url(bad)).await;
        assert_eq!(status, code, "{bad}: {body}");
        assert!(!body["error"]["message"].as_str().unwrap().is_empty());
    }
    assert_eq!(bob.get(&url("")).await.0, StatusCode::NOT_FOUND);

    // The next run in the conversation still works.
    let (_, message) = answer(&admin, &cid, "```bash\nwc -l < data.csv\n```").await;
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "3\n");
}

#[tokio::test]
async fn restart_python_forgets_the_names_and_keeps_the_files() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = admin.new_chat().await;
    let url = format!("/api/v1/chats/{cid}/sandbox/restart-python");
    // No sandbox yet: nothing to restart.
    assert_eq!(admin.post(&url, json!({})).await.0, StatusCode::NO_CONTENT);

    let (_, first) =
        answer(&admin, &cid, "```python\nx = 41\nopen('f.txt', 'w').write('kept')\nprint(x + 1)\n```").await;
    assert_eq!(first.steps[0].output.as_ref().unwrap().stdout, "42\n");
    assert_eq!(bob.post(&url, json!({})).await.0, StatusCode::NOT_FOUND);
    // Not while an answer runs in the conversation.
    let aid = admin.ask(&cid, "```python\nimport time\ntime.sleep(3)\n```").await;
    assert_eq!(admin.post(&url, json!({})).await.0, StatusCode::CONFLICT);
    admin.done_after(&cid, &aid, "0").await;

    let (status, body) = admin.post(&url, json!({})).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (_, after) = answer(&admin, &cid, "```python\nprint(open('f.txt').read())\nprint(x)\n```").await;
    let output = after.steps[0].output.as_ref().unwrap();
    assert_eq!(output.stdout, "kept\n", "the files stay");
    assert!(output.stderr.contains("NameError") && !output.stderr.contains("had stopped"), "{}", output.stderr);
    // And Python goes on as usual.
    let (_, next) = answer(&admin, &cid, "```python\ny = 2\nprint(y * 3)\n```").await;
    assert_eq!(next.steps[0].output.as_ref().unwrap().stdout, "6\n");
}

/// A one-page HTTP server on loopback; its port.
pub(crate) async fn one_page_server(page: &'static str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let reply =
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}", page.len());
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn a_runs_step_says_which_hosts_it_reached_and_which_it_was_refused() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let hosts = json!({"network": "hosts", "hosts": ["localhost"], "trusted_egress": ["127.0.0.0/8"]});
    let (status, body) = admin.put("/api/v1/admin/sandbox", hosts).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let port = one_page_server("a page from the network").await;
    let cid = admin.new_chat().await;
    // The proxy as the run's environment names it (whose NO_PROXY sends `localhost` direct).
    let code = format!(
        "```bash\ncurl -sS -m 20 -p --noproxy \"\" -x \"$HTTPS_PROXY\" http://localhost:{port}/\necho\n\
         curl -sS -p -o /dev/null http://blocked.invalid:443/ || true\n```"
    );
    let (_, message) = answer(&admin, &cid, &code).await;
    let output = message.steps[0].output.as_ref().unwrap();
    assert!(output.stdout.starts_with("a page from the network"), "{output:?}");
    let hosts: Vec<(&str, bool)> = output.network.iter().map(|r| (r.host.as_str(), r.allowed)).collect();
    assert_eq!(hosts, [("localhost", true), ("blocked.invalid", false)], "{:?}", output.network);
    assert_eq!(output.network_line().as_deref(), Some("reached localhost; 1 refused"));
    // Saved with the step: a reload shows it.
    let (_, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(chat["messages"][1]["steps"][0]["output"]["network"][1]["host"], "blocked.invalid");
    // The next run (asked first: a networked run's output is outside text) reached
    // nothing, and says nothing.
    let aid = admin.ask(&cid, "```bash\necho quiet\n```").await;
    let (approval, seen) = admin.approval_of(&cid, &aid).await;
    admin.post(&format!("/api/v1/approvals/{approval}"), json!({"approve": true})).await;
    let next = admin.done_after(&cid, &aid, &seen).await;
    assert_eq!(next.steps[0].output.as_ref().unwrap().stdout, "quiet\n");
    assert!(next.steps[0].output.as_ref().unwrap().network.is_empty());
}

#[tokio::test]
async fn an_owner_allows_a_refused_host_for_their_conversation_only_where_the_admin_lets_them() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let net = json!({"network": "hosts", "hosts": ["other.invalid"], "trusted_egress": ["127.0.0.0/8"]});
    assert_eq!(admin.put("/api/v1/admin/sandbox", net).await.0, StatusCode::OK);
    let port = one_page_server("reached with the owner's leave").await;
    let code = format!("```bash\ncurl -sS -p --noproxy \"\" -x \"$HTTPS_PROXY\" http://localhost:{port}/ || true\n```");
    let cid = admin.new_chat().await;
    let (_, first) = answer(&admin, &cid, &code).await;
    let refused = &first.steps[0].output.as_ref().unwrap().network[0];
    assert_eq!((refused.host.as_str(), refused.allowed, refused.allowable), ("localhost", false, false));
    let hosts = format!("/api/v1/chats/{cid}/sandbox/hosts");
    let (status, body) = admin.post(&hosts, json!({"host": "localhost"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "the admin has not let people: {body}");

    // The admin lets people; the run again (the person's own: no question asked) offers it.
    let allow = json!({"people_allow_hosts": true});
    let (status, body) = admin.put("/api/v1/admin/sandbox", allow).await;
    assert_eq!((status, body["people_allow_hosts"].as_bool()), (StatusCode::OK, Some(true)), "{body}");
    let again = |code: String| {
        let (admin, cid, aid) = (&admin, cid.clone(), first.id.clone());
        async move {
            let body = json!({"message_id": aid, "step_id": "s1", "code": code});
            assert_eq!(admin.post(&format!("/api/v1/chats/{cid}/runs"), body).await.0, StatusCode::ACCEPTED);
            let done = admin.done_after(&cid, &aid, "0").await;
            done.steps.last().and_then(|s| s.output.clone()).unwrap()
        }
    };
    let bash = code.trim_start_matches("```bash\n").trim_end_matches("\n```").to_owned();
    let output = again(bash.clone()).await;
    assert!(output.network[0].allowable && !output.network[0].allowed, "{:?}", output.network);

    // Bad asks change nothing: another person's conversation, an address, a stray field.
    assert_eq!(bob.post(&hosts, json!({"host": "localhost"})).await.0, StatusCode::NOT_FOUND);
    for bad in [json!({"host": "10.0.0.1"}), json!({"host": "a b"}), json!({"host": "x.org", "port": 1})] {
        assert_eq!(admin.post(&hosts, bad.clone()).await.0, StatusCode::BAD_REQUEST, "{bad}");
    }
    let (status, body) = admin.post(&hosts, json!({"host": "LocalHost."})).await;
    assert_eq!((status, body["hosts"].clone()), (StatusCode::OK, json!(["localhost"])), "{body}");
    // A fork takes the owner's leave along.
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/fork"), json!({"message_id": first.id})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let fork_hosts = format!("/api/v1/chats/{}/sandbox/hosts", body["chat"]["id"].as_str().unwrap());
    let (_, body) = admin.post(&fork_hosts, json!({"host": "second.invalid"})).await;
    assert_eq!(body["hosts"], json!(["localhost", "second.invalid"]), "{body}");
    let output = again(bash.clone()).await;
    assert_eq!(output.stdout, "reached with the owner's leave", "{output:?}");
    assert!(output.network[0].reason.ends_with("(allowed in this conversation)"), "{:?}", output.network);
    // The egress log says who allowed it.
    let (_, settings) = admin.get("/api/v1/admin/sandbox").await;
    let log = settings["recent_egress"].as_array().unwrap();
    assert!(
        log.iter().any(|e| e["chat_id"] == cid.as_str() && e["reason"] == "allowed in this conversation by its owner")
    );

    // Another conversation is refused the host.
    let other = admin.new_chat().await;
    let (_, elsewhere) = answer(&admin, &other, &code).await;
    assert!(!elsewhere.steps[0].output.as_ref().unwrap().network[0].allowed);
    // The admin takes the leave back: the host is refused again, and not offered.
    let (status, _) = admin.put("/api/v1/admin/sandbox", json!({"people_allow_hosts": false})).await;
    assert_eq!(status, StatusCode::OK);
    let output = again(bash).await;
    let reach = &output.network[0];
    assert!(!reach.allowed && !reach.allowable, "{reach:?}");
}
