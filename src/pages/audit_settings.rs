//! Admin Settings > Audit: the trail newest first (who signed in, changed a setting,
//! shared or downloaded a file, ran code), filtered by kind, person, conversation and
//! days, older pages on demand, and the same entries exported as JSON Lines.

use lens_types::{AuditAction, AuditChange, AuditEntry};
use leptos::prelude::*;

use crate::{api, dates};

/// The filters as the form holds them (empty: not filtered).
#[derive(Debug, Clone, Default, PartialEq)]
struct Filters {
    action: String,
    actor: String,
    chat: String,
    /// Days as a date input gives them, 2026-12-21; `to` is the last day shown.
    from: String,
    to: String,
}

/// The query string for `filters` (and a page older than `before`), each value passed
/// through `encode`; empty when nothing is asked for. An unreadable day is left out.
fn audit_query(filters: &Filters, before: Option<i64>, encode: impl Fn(&str) -> String) -> String {
    let mut pairs = Vec::new();
    for (key, value) in [("action", &filters.action), ("actor", &filters.actor), ("chat_id", &filters.chat)] {
        if !value.trim().is_empty() {
            pairs.push(format!("{key}={}", encode(value.trim())));
        }
    }
    if let Some(ms) = dates::day_start(&filters.from) {
        pairs.push(format!("since={ms}"));
    }
    if let Some(ms) = dates::day_start(&filters.to) {
        pairs.push(format!("until={}", ms + 86_400_000));
    }
    if let Some(id) = before {
        pairs.push(format!("before={id}"));
    }
    if pairs.is_empty() { String::new() } else { format!("?{}", pairs.join("&")) }
}

fn encode(value: &str) -> String {
    js_sys::encode_uri_component(value).into()
}

/// One changed field, as its row says it.
fn change_words(c: &AuditChange) -> String {
    let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not set)".into());
    format!("{}: {} → {}", c.field, shown(&c.before), shown(&c.after))
}

/// What an entry was done to, and in which conversation.
fn place(entry: &AuditEntry) -> String {
    let target = entry.target.clone().unwrap_or_default();
    match &entry.chat_id {
        Some(c) if target.is_empty() => format!("conversation {c}"),
        Some(c) => format!("{target} in conversation {c}"),
        None => target,
    }
}

/// An entry's facts and changes, as one line each.
fn facts(entry: &AuditEntry) -> Vec<String> {
    entry
        .details
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{}: {v}", k.replace('_', " ")))
        .chain(entry.changes.iter().map(change_words))
        .collect()
}

#[component]
pub fn AuditSection() -> impl IntoView {
    let filters = RwSignal::new(Filters::default());
    let entries = RwSignal::new(Vec::<AuditEntry>::new());
    let next_before = RwSignal::new(None::<i64>);
    let keep_days = RwSignal::new(None::<u32>);
    let loading = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    // `more`: the next older page, added below; else the first page for the filters.
    let load = move |more: bool| {
        let before = if more { next_before.get_untracked() } else { None };
        let query = audit_query(&filters.get_untracked(), before, encode);
        loading.set(true);
        leptos::task::spawn_local(async move {
            match api::audit(&query).await {
                Ok(page) => {
                    if more {
                        entries.update(|e| e.extend(page.entries));
                    } else {
                        entries.set(page.entries);
                    }
                    next_before.set(page.next_before);
                    keep_days.set(Some(page.keep_days));
                    error.set(None);
                }
                Err(e) => error.set(Some(e.message)),
            }
            loading.set(false);
        });
    };
    load(false);
    let field = move |label: &'static str,
                      kind: &'static str,
                      testid: &'static str,
                      get: fn(&Filters) -> &String,
                      set: fn(&mut Filters, String)| {
        view! {
            <label>{label}
                <input type=kind data-testid=testid prop:value=move || filters.with(|f| get(f).clone())
                    on:input=move |ev| filters.update(|f| set(f, event_target_value(&ev))) />
            </label>
        }
    };
    let export = move || api::audit_export_url(&filters.with(|f| audit_query(f, None, encode)));
    view! {
        <section class="card" aria-labelledby="audit-h" data-testid="audit">
            <h2 id="audit-h">"Audit"</h2>
            <p class="muted" data-testid="audit-keep">{move || match keep_days.get() {
                Some(0) => "The audit trail is off (LENS_AUDIT_DAYS=0): nothing is recorded.".to_owned(),
                Some(days) => format!(
                    "Sign-ins, tokens, accounts, settings, hosts allowed, approvals, files shared and downloaded, and \
                     every run, kept {days} days. Secrets show as [hidden]; no file's contents are kept."
                ),
                None => String::new(),
            }}</p>
            <form class="form audit-filters" aria-label="Filter the audit trail"
                on:submit=move |ev: leptos::ev::SubmitEvent| {
                    ev.prevent_default();
                    load(false);
                }>
                <label>"Kind"
                    <select data-testid="audit-action"
                        on:change=move |ev| filters.update(|f| f.action = event_target_value(&ev))>
                        <option value="" selected=move || filters.with(|f| f.action.is_empty())>"Everything"</option>
                        {AuditAction::ALL.iter().map(|a| {
                            let slug = a.as_str();
                            view! {
                                <option value=slug selected=move || filters.with(|f| f.action == slug)>{a.label()}</option>
                            }
                        }).collect_view()}
                    </select>
                </label>
                {field("Person", "text", "audit-actor", |f| &f.actor, |f, v| f.actor = v)}
                {field("Conversation id", "text", "audit-chat", |f| &f.chat, |f, v| f.chat = v)}
                {field("From (UTC)", "date", "audit-from", |f| &f.from, |f, v| f.from = v)}
                {field("To (UTC)", "date", "audit-to", |f| &f.to, |f, v| f.to = v)}
                <div class="actions">
                    <button type="submit" data-testid="audit-show">"Show"</button>
                    <a class="button" href=export download="" data-testid="audit-export">"Export as JSON Lines"</a>
                </div>
            </form>
            <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            {move || {
                if entries.with(Vec::is_empty) {
                    return view! {
                        <p class="muted" data-testid="audit-empty">
                            {move || if loading.get() { "Loading…" } else { "No entry matches." }}
                        </p>
                    }
                    .into_any();
                }
                view! {
                    <div class="table-scroll">
                    <table class="audit" data-testid="audit-table" aria-busy=move || loading.get().to_string()>
                        <caption>"Newest first"</caption>
                        <thead><tr>
                            <th scope="col">"When"</th><th scope="col">"Who"</th><th scope="col">"What"</th>
                            <th scope="col">"On"</th><th scope="col">"From"</th><th scope="col">"Details"</th>
                        </tr></thead>
                        <tbody>
                            {move || entries.get().into_iter().map(|e| view! {
                                <tr data-testid="audit-row" data-action=e.action.as_str()>
                                    <td>{dates::moment_of(e.at)}</td>
                                    <td>{e.actor.clone().unwrap_or_else(|| "—".into())}</td>
                                    <th scope="row">{e.action.label()}</th>
                                    <td>{place(&e)}</td>
                                    <td>{e.client.clone().unwrap_or_else(|| "—".into())}</td>
                                    <td><ul class="audit-facts">
                                        {facts(&e).into_iter().map(|f| view! { <li>{f}</li> }).collect_view()}
                                    </ul></td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    </div>
                }
                .into_any()
            }}
            {move || next_before.get().map(|_| view! {
                <button type="button" data-testid="audit-older" disabled=move || loading.get()
                    on:click=move |_| load(true)>"Older entries"</button>
            })}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_carries_only_the_filters_given() {
        let plain = |v: &str| v.replace(' ', "%20");
        assert_eq!(audit_query(&Filters::default(), None, plain), "");
        let f = Filters {
            action: "run".into(),
            actor: " ada lovelace ".into(),
            from: "2026-12-06".into(),
            to: "2026-12-06".into(),
            ..Filters::default()
        };
        assert_eq!(
            audit_query(&f, Some(42), plain),
            "?action=run&actor=ada%20lovelace&since=1796515200000&until=1796601600000&before=42"
        );
        let bad_day = Filters { from: "soon".into(), ..Filters::default() };
        assert_eq!(audit_query(&bad_day, None, plain), "");
    }
}
