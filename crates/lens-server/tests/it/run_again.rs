//! Edit and run again: a run's code, edited by the person, runs in the same Python as a
//! new step of the newest answer, streams live, and the model reads it afterwards.

use std::sync::Arc;

use lens_llm::{ChatMessage, ModelEvent, ScriptedTurn, ToolCall};
use lens_types::{MessageStatus, MessageView, OutputStream, PersonRun, RunAgainResponse, StepStatus, StreamEvent};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::{Client, TestApp};

fn python(code: &str) -> ScriptedTurn {
    let call = ToolCall { id: "c1".into(), name: "run_python".into(), arguments: json!({"code": code}) };
    ScriptedTurn::events(vec![ModelEvent::ToolCall(call)])
}

fn done(events: &[(String, StreamEvent)]) -> MessageView {
    let Some((_, StreamEvent::Done { message })) = events.last().cloned() else { panic!("no done: {events:?}") };
    message
}

/// Runs `code` as an edit of `step_id` of `aid`; the answer's events until it ends.
async fn run_again(client: &Client, cid: &str, aid: &str, step_id: &str, code: &str) -> Vec<(String, StreamEvent)> {
    let body = json!({"message_id": aid, "step_id": step_id, "code": code});
    let (status, started) = client.post(&format!("/api/v1/chats/{cid}/runs"), body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{started}");
    let started: RunAgainResponse = serde_json::from_value(started).unwrap();
    client.events(cid, &started.answer_id, None, 10_000).await
}

#[tokio::test]
async fn an_edited_run_uses_the_same_python_streams_and_the_model_reads_it() {
    let model = Arc::new(lens_llm::Scripted::new(vec![
        python("x = 41\nprint(x)"),
        ScriptedTurn::text("Printed."),
        ScriptedTurn::text("Seen."),
    ]));
    let app = TestApp::builder().sandbox().model(model.clone()).build().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "print it").await;
    let first = done(&admin.events(&cid, &aid, None, 10_000).await);
    assert_eq!(first.steps[0].output.as_ref().unwrap().stdout, "41\n");

    let events = run_again(&admin, &cid, &aid, "s1", "print(x + 1)").await;
    // Followed from the first event, the answer shows whole: its text, its step, the run.
    assert_eq!(events[0].1, StreamEvent::Token { text: "Printed.".into() });
    assert_eq!(events[1].1, StreamEvent::Step { step: first.steps[0].clone() });
    let live: String = events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::Output { step_id, stream: OutputStream::Stdout, text } if step_id == "s2" => {
                Some(text.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(live, "42\n", "the run streams, with the names the answer's run made");
    let message = done(&events);
    assert_eq!((message.status, message.text.as_str(), message.steps.len()), (MessageStatus::Complete, "Printed.", 2));
    let run = &message.steps[1];
    assert_eq!(
        run.by_person,
        Some(PersonRun { message_id: aid.clone(), step_id: "s1".into(), answer_was: MessageStatus::Complete })
    );
    assert_eq!(run.status, StepStatus::Succeeded);
    let output = run.output.as_ref().unwrap();
    assert_eq!((output.code.as_str(), output.stdout.as_str()), ("print(x + 1)", "42\n"));
    assert_eq!(run.summary, "Run Python: print(x + 1)");
    assert!(run.context.is_some(), "it says what it takes of the model's context");
    // A reload shows what the stream showed.
    let (_, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    let saved: MessageView = serde_json::from_value(chat["messages"][1].clone()).unwrap();
    assert_eq!(saved, message);

    // The model reads the person's run with the conversation, in the person's voice.
    let next = admin.ask(&cid, "what did I get?").await;
    assert_eq!(done(&admin.events(&cid, &next, None, 10_000).await).text, "Seen.");
    let request = model.requests().last().cloned().unwrap();
    let notes: Vec<&String> = request
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { text } if text.contains("ran it in the sandbox myself") => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(notes.len(), 1, "{:?}", request.messages);
    assert!(notes[0].contains("print(x + 1)") && notes[0].contains("42"), "{}", notes[0]);
    assert!(
        matches!(request.messages.last(), Some(ChatMessage::User { text }) if text == "what did I get?"),
        "the question comes last"
    );
}

#[tokio::test]
async fn a_run_again_can_be_stopped_refuses_bad_asks_and_the_next_run_works() {
    let model = Arc::new(lens_llm::Scripted::new(vec![python("y = 6\nprint(y)"), ScriptedTurn::text("Done.")]));
    let app = TestApp::builder().sandbox().model(model).build().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "go").await;
    done(&admin.events(&cid, &aid, None, 10_000).await);
    let url = format!("/api/v1/chats/{cid}/runs");

    // Someone else's conversation, an unknown step, empty code, a stray field: nothing runs.
    let ask = |step: &str, code: &str| json!({"message_id": aid, "step_id": step, "code": code});
    assert_eq!(bob.post(&url, ask("s1", "print(1)")).await.0, StatusCode::NOT_FOUND);
    assert_eq!(admin.post(&url, ask("s9", "print(1)")).await.0, StatusCode::NOT_FOUND);
    let (status, body) = admin.post(&url, ask("s1", "  \n")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        admin.post(&url, json!({"message_id": aid, "step_id": "s1", "code": "1", "x": 1})).await.0,
        StatusCode::BAD_REQUEST
    );
    let (_, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(chat["messages"][1]["steps"].as_array().unwrap().len(), 1, "nothing was added");

    // A long run: a second ask waits its turn, and Stop ends it; the answer stays as it was.
    let (status, body) = admin.post(&url, ask("s1", "import time\nprint('start', flush=True)\ntime.sleep(60)")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (status, _) = admin.post(&url, ask("s1", "print(y)")).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _) = admin.post(&format!("/api/v1/chats/{cid}/messages"), json!({"text": "hi"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "no question while the run runs");
    let events = admin.events(&cid, &aid, None, 4).await;
    assert!(events.iter().any(|(_, e)| matches!(e, StreamEvent::Step { step } if step.id == "s2")), "{events:?}");
    admin.post(&format!("/api/v1/chats/{cid}/answers/{aid}/stop"), json!({})).await;
    let stopped = done(&admin.events(&cid, &aid, None, 10_000).await);
    assert_eq!(stopped.status, MessageStatus::Complete, "the answer ended as before");
    assert_eq!(stopped.steps[1].status, StepStatus::Failed);

    // The person's own hostile code: everything in the sandbox killed. The next run works.
    let killed = done(&run_again(&admin, &cid, &aid, "s1", "import os, signal\nos.kill(-1, signal.SIGKILL)").await);
    assert_eq!(killed.steps.len(), 3);
    let next = done(&run_again(&admin, &cid, &aid, "s1", "print(6 * 7)").await);
    assert_eq!(next.steps[3].output.as_ref().unwrap().stdout, "42\n", "{:?}", next.steps[3]);
    assert_eq!(next.steps[3].id, "s4");
}
