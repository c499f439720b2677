//! Several `lens serve` processes on one PostgreSQL database (and one bucket, when a
//! Garage was started): a replica killed mid-answer (`kill -9`) loses nothing, another
//! marks the answer interrupted with the output so far and takes the next message; local
//! sandboxes are refused beside replicas that did not say they share one host. Skipped,
//! with a line saying so, where no PostgreSQL server was started.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use lens_types::{ChatDetail, MessageStatus, StepStatus, StreamEvent};
use reqwest::StatusCode;
use serde_json::json;
use sqlx::Connection;

use crate::test_app::{Client, TestApp};

/// One `lens serve` process; killed (SIGKILL) and reaped when dropped.
struct Replica {
    child: Child,
    base: String,
}

/// What every replica of the test shares: the database, the data directory's secret,
/// the bucket (when there is one).
struct Shared {
    database: String,
    files: Option<String>,
    dir: PathBuf,
}

impl Shared {
    fn serve(&self, extra: &[(&str, &str)]) -> Command {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let agent = Path::new(env!("CARGO_BIN_EXE_lens")).with_file_name("lens-sandbox-agent");
        let mut command = Command::new(env!("CARGO_BIN_EXE_lens"));
        command
            .args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--data-dir"])
            .arg(self.dir.join("data"))
            .env("LENS_DATABASE_URL", &self.database)
            .env("LENS_SECRET", "a-test-secret-that-is-long-enough-for-lens")
            .env("LENS_SANDBOX", "true")
            .env("LENS_SANDBOX_AGENT", agent)
            .env("LENS_LOG", "warn")
            // A port of the kernel's choosing: the default, the port after Lens's, may be
            // the one the next replica was just given.
            .env("LENS_PREVIEW_ADDR", "127.0.0.1:0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(files) = &self.files {
            command.env("LENS_FILE_STORE", files);
        }
        for (key, value) in extra {
            command.env(key, value);
        }
        command
    }

    async fn start(&self, extra: &[(&str, &str)]) -> Replica {
        let mut command = self.serve(extra);
        let base = format!(
            "http://{}",
            command.get_args().nth(2).unwrap().to_str().unwrap() // --addr's value
        );
        let child = command.spawn().unwrap();
        let mut replica = Replica { child, base };
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        while http.get(format!("{}/healthz", replica.base)).send().await.is_err() {
            if let Ok(Some(status)) = replica.child.try_wait() {
                panic!("a replica ended at start ({status}): {}", replica.stderr());
            }
            assert!(Instant::now() < deadline, "a replica did not start listening");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        replica
    }
}

impl Replica {
    fn client(&self, csrf: Option<String>) -> Client {
        Client {
            base: self.base.clone(),
            http: reqwest::Client::builder().cookie_store(true).build().unwrap(),
            csrf,
            bearer: None,
        }
    }

    fn stderr(&mut self) -> String {
        use std::io::Read;
        let mut out = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut out);
        }
        out
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The admin's client on `replica`, logged in there (sessions are in the shared database).
async fn admin_on(replica: &Replica) -> Client {
    let mut client = replica.client(None);
    let (status, body) =
        client.post("/api/v1/auth/login", json!({"username": "admin", "password": "admin-password"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    client.csrf = body["csrf_token"].as_str().map(str::to_owned);
    client
}

async fn chat(client: &Client, cid: &str) -> ChatDetail {
    let (status, body) = client.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_value(body).unwrap()
}

#[tokio::test]
async fn a_replica_killed_mid_answer_loses_nothing_and_the_next_message_works_on_another() {
    let Some(database) = crate::postgres::fresh_database().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let shared = Shared { database, files: crate::file_store::fresh_prefix_if_started(), dir: dir.path().into() };
    let one_host = [("LENS_REPLICAS_ON_ONE_HOST", "true")];
    let mut a = shared.start(&one_host).await;
    let b = shared.start(&one_host).await;
    let mut setup = b.client(None);
    let (status, body) = setup.post("/api/v1/setup", json!({"username": "admin", "password": "admin-password"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    setup.csrf = body["csrf_token"].as_str().map(str::to_owned);
    let (on_a, on_b) = (admin_on(&a).await, admin_on(&b).await);

    // A runs an answer whose step prints, then waits; its output so far is saved as it runs.
    let cid = on_a.new_chat().await;
    let aid = on_a.ask(&cid, "```bash\necho started; sleep 600\n```").await;
    let mut db = sqlx::PgConnection::connect(&shared.database).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let live: Option<String> = sqlx::query_scalar("SELECT live_run FROM messages WHERE id = $1")
            .bind(&aid)
            .fetch_one(&mut db)
            .await
            .unwrap();
        let live: Option<serde_json::Value> = live.and_then(|l| serde_json::from_str(&l).ok());
        if live.is_some_and(|l| l["output"]["stdout"] == "started\n") {
            break;
        }
        assert!(Instant::now() < deadline, "the run's output never reached the database");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(chat(&on_b, &cid).await.messages[1].status, MessageStatus::Streaming, "B sees it running");

    // kill -9: no goodbye. B marks the answer interrupted once A is not heard from.
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let killed = Instant::now();
    let answer = loop {
        let detail = chat(&on_b, &cid).await;
        let answer = detail.messages.into_iter().find(|m| m.id == aid).unwrap();
        if answer.status != MessageStatus::Streaming {
            break answer;
        }
        assert!(killed.elapsed() < Duration::from_secs(90), "the dead replica's answer is still streaming");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(answer.status, MessageStatus::Interrupted);
    let step = &answer.steps[0];
    assert_eq!(step.status, StepStatus::Failed);
    let output = step.output.as_ref().expect("the step keeps its output");
    assert_eq!(output.stdout, "started\n", "nothing printed before the kill is lost");
    assert_eq!(output.ending.describe(), "the server stopped during this run");
    eprintln!("interrupted {:.1} s after the kill", killed.elapsed().as_secs_f64());

    // The next message, on B, in the same conversation: the sandbox and its files are there.
    let aid = on_b.ask(&cid, "```bash\necho next > next.txt && cat next.txt && ls\n```").await;
    let done = on_b.done_after(&cid, &aid, "0").await;
    assert_eq!(done.status, MessageStatus::Complete, "{done:?}");
    assert!(done.steps[0].output.as_ref().unwrap().stdout.starts_with("next\n"), "{done:?}");

    // A third replica whose sandboxes are local, without saying it shares this host: refused.
    let mut refused = shared.serve(&[]).spawn().unwrap();
    let status = refused.wait().unwrap();
    let mut said = String::new();
    std::io::Read::read_to_string(&mut refused.stderr.take().unwrap(), &mut said).unwrap();
    assert!(!status.success());
    assert!(said.contains("replicas must share their sandboxes"), "{said}");
}

/// Follows an answer on `client` one event at a time (each a new request, resuming with
/// Last-Event-ID as a browser does) until `until` says so; every event with its id.
async fn follow_until(
    client: &Client,
    cid: &str,
    aid: &str,
    until: impl Fn(&StreamEvent) -> bool,
) -> Vec<(String, StreamEvent)> {
    let mut seen: Vec<(String, StreamEvent)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        let last = seen.last().map(|(id, _)| id.clone());
        let events = client.events(cid, aid, last.as_deref(), 1).await;
        let Some(event) = events.into_iter().next() else { continue };
        let done = until(&event.1);
        seen.push(event);
        if done {
            return seen;
        }
    }
    panic!("never came: {seen:?}")
}

#[tokio::test]
async fn an_answer_written_on_one_replica_is_followed_and_stopped_from_another() {
    let Some(database) = crate::postgres::fresh_database().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let shared = Shared { database, files: crate::file_store::fresh_prefix_if_started(), dir: dir.path().into() };
    let one_host = [("LENS_REPLICAS_ON_ONE_HOST", "true")];
    let (a, b) = (shared.start(&one_host).await, shared.start(&one_host).await);
    let mut setup = a.client(None);
    let (status, body) = setup.post("/api/v1/setup", json!({"username": "admin", "password": "admin-password"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    setup.csrf = body["csrf_token"].as_str().map(str::to_owned);
    let (on_a, on_b) = (admin_on(&a).await, admin_on(&b).await);

    // A writes the answer; the person's page follows it on B, live.
    let cid = on_a.new_chat().await;
    let aid = on_a.ask(&cid, "```bash\necho one; sleep 1; echo two; sleep 600\n```").await;
    let printed = |e: &StreamEvent| matches!(e, StreamEvent::Output { text, .. } if text.contains("two"));
    let on_b_events = follow_until(&on_b, &cid, &aid, printed).await;
    let ids: Vec<usize> = on_b_events.iter().map(|(id, _)| id.parse().unwrap()).collect();
    assert_eq!(ids, (1..=ids.len()).collect::<Vec<_>>(), "B numbers the events as A does");
    let on_a_events = on_a.events(&cid, &aid, None, ids.len()).await;
    assert_eq!(on_a_events, on_b_events, "the same events, in the same order, on both");

    // Stop from B reaches A's run; both streams end with the stopped answer.
    let (status, _) = on_b.post(&format!("/api/v1/chats/{cid}/answers/{aid}/stop"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let last = on_b_events.last().unwrap().0.clone();
    let done = on_b.done_after(&cid, &aid, &last).await;
    assert_eq!(done.status, MessageStatus::Stopped, "{done:?}");
    assert_eq!(on_a.done_after(&cid, &aid, &last).await.status, MessageStatus::Stopped);
    assert_eq!(chat(&on_b, &cid).await.messages[1].status, MessageStatus::Stopped);

    // The next messages reach B, but A, whose agent holds the conversation's Python, writes
    // them: a name made in one is there in the next, and each is followed on either.
    let aid = on_b.ask(&cid, "```python\nkept = 'on the replica with the kernel'\n```").await;
    let done = on_b.done_after(&cid, &aid, "0").await;
    assert_eq!(done.status, MessageStatus::Complete, "{done:?}");
    let next = on_b.ask(&cid, "```python\nprint(kept)\n```").await;
    let done = on_a.done_after(&cid, &next, "0").await;
    assert_eq!(done.steps[0].output.as_ref().unwrap().stdout, "on the replica with the kernel\n", "{done:?}");
    // An agent asks on B through MCP: A writes it, and B's tool waits for its end.
    let mcp = crate::mcp::connect_to(&b.base, &crate::mcp::token(&on_b).await).await;
    let asked = json!({"chat_id": cid, "text": "```python\nprint(kept * 2)\n```"});
    let answer = crate::mcp::call(&mcp, "ask", asked).await.unwrap();
    assert_eq!(answer["status"], "complete", "{answer}");
    assert_eq!(answer["steps"][0]["stdout"], "on the replica with the kernelon the replica with the kernel\n");
    let mut db = sqlx::PgConnection::connect(&shared.database).await.unwrap();
    let writers: Vec<Option<String>> =
        sqlx::query_scalar("SELECT replica FROM messages WHERE role = 'assistant' AND chat_id = $1 ORDER BY seq")
            .bind(&cid)
            .fetch_all(&mut db)
            .await
            .unwrap();
    assert_eq!(writers.len(), 4);
    assert!(writers.iter().all(|w| w.is_some() && *w == writers[0]), "one replica wrote them all: {writers:?}");
    // A run edited and run again, asked on B (which followed that answer a moment ago):
    // A runs it, in the Python with the names, and B follows it from the first event.
    let newest = chat(&on_b, &cid).await.messages.pop().unwrap();
    let again = json!({"message_id": newest.id, "step_id": "s1", "code": "print(kept.upper())"});
    let (status, body) = on_b.post(&format!("/api/v1/chats/{cid}/runs"), again).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let done = on_b.done_after(&cid, &newest.id, "0").await;
    assert_eq!(done.steps.len(), 2, "{done:?}");
    assert!(done.steps[1].by_person.is_some());
    assert_eq!(done.steps[1].output.as_ref().unwrap().stdout, "ON THE REPLICA WITH THE KERNEL\n", "{done:?}");
    assert_eq!(done.text, newest.text);

    // The admin shortens the time limit per run on A; B's next run, in a conversation B
    // writes, ends at it.
    let (status, body) = on_a.put("/api/v1/admin/sandbox", json!({"timeout_secs": 2})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // B hears of it by a signal a moment later: a run begun before that has the old limit.
    let mut endings = Vec::new();
    for _ in 0..3 {
        let fresh = on_b.new_chat().await;
        let aid = on_b.ask(&fresh, "```bash\nsleep 6; echo late\n```").await;
        let done = on_b.done_after(&fresh, &aid, "0").await;
        endings.push(done.steps[0].output.as_ref().expect("the run's output").ending.describe());
        if endings.last().is_some_and(|e| e == "timed out after 2 s") {
            break;
        }
    }
    assert_eq!(endings.last().map(String::as_str), Some("timed out after 2 s"), "{endings:?}");
}

#[tokio::test]
async fn login_limits_count_the_attempts_made_at_every_replica() {
    let Some(database) = crate::postgres::fresh_database().await else { return };
    let on = |url: String| TestApp::builder().config(move |c| c.database_url = Some(url.as_str().into())).build();
    let (a, b) = (on(database.clone()).await, on(database).await);
    a.admin().await;
    let wrong = json!({"username": "admin", "password": "not-the-password"});
    for _ in 0..5 {
        let (status, body) = a.anonymous().post("/api/v1/auth/login", wrong.clone()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    }
    // The sixth guess from this address at this name, at the other replica: refused.
    let (status, body) = b.anonymous().post("/api/v1/auth/login", wrong).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
}

#[tokio::test]
async fn the_open_streams_of_a_person_are_counted_at_every_replica() {
    let Some(database) = crate::postgres::fresh_database().await else { return };
    let words = (0..400).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    let on = |url: String| {
        TestApp::builder()
            .turns(vec![lens_llm::ScriptedTurn::text(&words).paced(Duration::from_millis(50))])
            .config(move |c| {
                c.database_url = Some(url.as_str().into());
                c.streams_per_person = 2;
            })
            .build()
    };
    let (a, b) = (on(database.clone()).await, on(database).await);
    let on_a = a.admin().await;
    let on_b = b.login("admin", "admin-password").await;
    let cid = on_a.new_chat().await;
    let aid = on_a.ask(&cid, "write").await;

    // One stream on each replica: the person's two.
    let url = format!("/api/v1/chats/{cid}/answers/{aid}/events");
    let one = on_a.request(reqwest::Method::GET, &url).send().await.unwrap();
    let two = on_b.request(reqwest::Method::GET, &url).send().await.unwrap();
    assert_eq!((one.status(), two.status()), (StatusCode::OK, StatusCode::OK));
    for client in [&on_a, &on_b] {
        let third = client.request(reqwest::Method::GET, &url).send().await.unwrap();
        assert_eq!(third.status(), StatusCode::TOO_MANY_REQUESTS, "a third, on either replica, is refused");
    }
    // Closed on A, the place is free on B.
    drop(one);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let again = on_b.request(reqwest::Method::GET, &url).send().await.unwrap();
        if again.status() == StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "a stream closed on A never gave its place back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(two);
}

#[tokio::test]
async fn a_run_waits_while_another_replica_drives_the_sandbox_and_takes_over_a_lapsed_lease() {
    use lens_server::chat::{AnswerHub, sandbox_lease};
    let Some(database) = crate::postgres::fresh_database().await else { return };
    let app = TestApp::builder().config(move |c| c.database_url = Some(database.as_str().into())).build().await;
    let chats = &app.state.chats;
    let store = &app.state.store;
    let hub = AnswerHub::default();
    let now = lens_server::now_ms;

    // Another replica drives conversation c1's sandbox and renews its lease: a run here
    // waits, says so, and goes on once the other lets go.
    assert!(store.take_lease("sandbox:c1", "other", now() + 60_000).await.unwrap());
    let log = hub.open("a1", "c1").unwrap();
    let mut stop = log.stop_signal();
    let waiting = tokio::spawn({
        let (chats, log) = (chats.clone(), log.clone());
        async move { sandbox_lease::hold(&chats, "c1", &log, &mut stop).await.map(|h| h.is_some()) }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while log.since(0).is_empty() {
        assert!(Instant::now() < deadline, "no notice while waiting");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(matches!(&log.since(0)[0].1, StreamEvent::Notice { text } if text.contains("Another Lens server")));
    assert!(!waiting.is_finished(), "it waits while the other holds the sandbox");
    store.release_lease("sandbox:c1", "other").await.unwrap();
    assert_eq!(waiting.await.unwrap(), Ok(true), "taken once let go");
    assert_eq!(store.lease("sandbox:c1").await.unwrap().unwrap().holder, *chats.replica);

    // A holder that stopped renewing (killed): its lease lapses and is taken over.
    assert!(store.take_lease("sandbox:c2", "killed", now() + 1_500).await.unwrap());
    let log = hub.open("a2", "c2").unwrap();
    let mut stop = log.stop_signal();
    let held = sandbox_lease::hold(chats, "c2", &log, &mut stop).await;
    assert!(held.is_ok_and(|h| h.is_some()));
    assert_eq!(store.lease("sandbox:c2").await.unwrap().unwrap().holder, *chats.replica);

    // Stopped while it waits: it ends at once, and the other keeps its lease.
    assert!(store.take_lease("sandbox:c3", "other", now() + 60_000).await.unwrap());
    let log = hub.open("a3", "c3").unwrap();
    let mut stop = log.stop_signal();
    let stopping = log.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(700)).await;
        stopping.request_stop();
    });
    let stopped = sandbox_lease::hold(chats, "c3", &log, &mut stop).await;
    assert_eq!(stopped.map(|h| h.is_some()), Err(sandbox_lease::NotHeld::Stopped));
    assert_eq!(store.lease("sandbox:c3").await.unwrap().unwrap().holder, "other");
}

#[tokio::test]
async fn a_run_that_asks_first_is_approved_from_another_replica() {
    let Some(database) = crate::postgres::fresh_database().await else { return };
    // A writes the answers and drives the sandbox; B only serves the person's page.
    let url = database.clone();
    let a = TestApp::builder()
        .sandbox()
        .config(move |c| {
            c.database_url = Some(url.as_str().into());
            c.replicas_on_one_host = true;
            c.sandbox_network = Some("registries".into());
            c.sandbox_registries = Some(vec!["https://index.invalid/simple/".into()]);
            c.approval_wait_secs = 120;
        })
        .settings_model()
        .await;
    let b = TestApp::builder().config(move |c| c.database_url = Some(database.as_str().into())).build().await;
    let on_a = a.admin().await;
    let on_b = b.login("admin", "admin-password").await;

    // Outside text in the conversation: the run asks first, and A's answer waits.
    let cid = on_a.new_chat().await;
    let (_, body) = on_a.upload("notes.txt", b"from elsewhere".to_vec()).await;
    let upload: lens_types::SharedFileRef = serde_json::from_value(body).unwrap();
    let (_, body) = on_a.ask_with(&cid, "```bash\ncat attachments/notes.txt\n```", &[&upload.id]).await;
    let aid = body["answer_id"].as_str().unwrap().to_owned();
    // The question reaches the page on B, and B records the decision.
    let (approval, seen) = on_b.approval_of(&cid, &aid).await;
    let url = format!("/api/v1/approvals/{approval}");
    let (status, body) = on_b.post(&url, json!({"approve": true})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A's waiting run hears of it and runs; both replicas see the same end.
    let done = on_b.done_after(&cid, &aid, &seen).await;
    let step = &done.steps[0];
    assert_eq!((step.status, step.approval.as_ref().unwrap().approved), (StepStatus::Succeeded, Some(true)));
    assert_eq!(step.output.as_ref().unwrap().stdout, "from elsewhere");
    assert_eq!(on_a.done_after(&cid, &aid, &seen).await, done);
    // Decided once: A refuses a second decision too.
    assert_eq!(on_a.post(&url, json!({"approve": false})).await.0, StatusCode::CONFLICT);

    // Declined on B: A does not run it.
    let aid = on_a.ask(&cid, "```bash\ntouch declined.txt\n```").await;
    let (approval, seen) = on_b.approval_of(&cid, &aid).await;
    let (status, _) = on_b.post(&format!("/api/v1/approvals/{approval}"), json!({"approve": false})).await;
    assert_eq!(status, StatusCode::OK);
    let done = on_b.done_after(&cid, &aid, &seen).await;
    assert_eq!(done.steps[0].result.as_deref(), Some("The person declined: this did not run."));
    assert!(done.steps[0].output.is_none());
}

#[tokio::test]
async fn a_persons_sandboxes_are_counted_at_every_replica_and_an_idle_one_elsewhere_makes_room() {
    let Some(database) = crate::postgres::fresh_database().await else { return };
    let on = |url: String| {
        TestApp::builder()
            .sandbox()
            .config(move |c| {
                c.database_url = Some(url.as_str().into());
                c.replicas_on_one_host = true;
            })
            .settings_model()
    };
    let (a, b) = (on(database.clone()).await, on(database).await);
    let on_a = a.admin().await;
    let on_b = b.login("admin", "admin-password").await;
    // One sandbox running per person, on whichever replica; put into force on both now
    // (rather than when B hears of the change a moment later).
    for client in [&on_a, &on_b] {
        let one = json!({"max_running_per_person": 1, "pool_size": 0, "queue_wait_secs": 120});
        let (status, body) = client.put("/api/v1/admin/sandbox", one).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    // The person's first conversation runs on A, whose sandbox stays up, idle.
    let first = on_a.new_chat().await;
    let aid = on_a.ask(&first, "```bash\necho first\n```").await;
    assert_eq!(on_a.done_after(&first, &aid, "0").await.status, MessageStatus::Complete);
    let driver_a = a.state.sandbox.driver().unwrap();
    assert_eq!(driver_a.status(&first).await.unwrap().state, lens_sandbox::SandboxState::Running);
    // A says so with its heartbeat (every 2 s: a start elsewhere sooner than that does
    // not know yet).
    says_what_it_runs(&a).await;

    // Their second, on B: the person is at their one, counted across replicas. B asks
    // the others for room, A stops the idle sandbox, and B's run goes on.
    let second = on_b.new_chat().await;
    let aid = on_b.ask(&second, "```bash\necho second\n```").await;
    let done = on_b.done_after(&second, &aid, "0").await;
    assert_eq!(done.status, MessageStatus::Complete, "{done:?}");
    assert_eq!(done.steps[0].output.as_ref().unwrap().stdout, "second\n");
    assert_eq!(driver_a.status(&first).await.unwrap().state, lens_sandbox::SandboxState::Stopped);
    assert_eq!(b.state.sandbox.held().running, 1);
    assert_eq!(a.state.sandbox.held().running, 0);

    // And back: the first conversation's next run, on A, stops B's idle one in turn.
    says_what_it_runs(&b).await;
    let aid = on_a.ask(&first, "```bash\necho again\n```").await;
    let done = on_a.done_after(&first, &aid, "0").await;
    assert_eq!(done.steps[0].output.as_ref().unwrap().stdout, "again\n", "{done:?}");
    assert_eq!(
        b.state.sandbox.driver().unwrap().status(&second).await.unwrap().state,
        lens_sandbox::SandboxState::Stopped
    );
}

/// Waits until `replica`'s heartbeat says what its sandboxes hold now.
async fn says_what_it_runs(replica: &TestApp) {
    let now = replica.state.sandbox.held();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let replicas = replica.state.store.live_replicas(0).await.unwrap();
        let said = replicas.iter().find(|r| r.id == replica.state.cluster.id()).map(|r| r.sandboxes.clone());
        if said.and_then(|s| serde_json::from_str::<lens_sandbox::Held>(&s).ok()).as_ref() == Some(&now) {
            return;
        }
        assert!(Instant::now() < deadline, "a replica never said it holds {now:?}: {replicas:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
