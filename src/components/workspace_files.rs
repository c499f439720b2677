//! `WorkspaceFiles`: the conversation's workspace, browsed without asking the model: one
//! folder at a time, with the way back up, each file's size, when it changed and the
//! run that made it (a link to that step), and Share, which gives its download.

use lens_types::{MadeBy, ShareFileRequest, WorkspaceEntry, WorkspaceListing};
use leptos::prelude::*;

use crate::{
    components::file_chip::{FileChip, size_words},
    dates::moment_of,
};

/// The folders from the workspace down to `path`: (name shown, path), the workspace first.
pub fn trail(path: &str) -> Vec<(String, String)> {
    let mut trail = vec![("workspace".to_owned(), String::new())];
    let mut at = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        if !at.is_empty() {
            at.push('/');
        }
        at.push_str(part);
        trail.push((part.to_owned(), at.clone()));
    }
    trail
}

/// Where the step that made a file is in the page.
pub fn step_anchor(by: &MadeBy) -> String {
    format!("#step-{}-{}", by.message_id, by.step_id)
}

#[component]
pub fn WorkspaceFiles(
    /// The conversation.
    chat_id: String,
    /// Changes when an answer ended (files may have come or gone).
    #[prop(into)]
    changed: Signal<u64>,
) -> impl IntoView {
    let folder = RwSignal::new(String::new());
    let listing = RwSignal::new(None::<WorkspaceListing>);
    let error = RwSignal::new(None::<String>);
    let cid = StoredValue::new(chat_id);
    Effect::new(move |_| {
        changed.track();
        let at = folder.get();
        let chat = cid.get_value();
        leptos::task::spawn_local(async move {
            let got = crate::api::workspace_files(&chat, &at).await;
            // The person may have opened another folder meanwhile.
            if folder.get_untracked() != at {
                return;
            }
            match got {
                Ok(l) => {
                    listing.set(Some(l));
                    error.set(None);
                }
                Err(e) => error.set(Some(e.message)),
            }
        });
    });
    let crumbs = move || {
        let path = folder.get();
        let parts = trail(&path);
        let last = parts.len() - 1;
        parts
            .into_iter()
            .enumerate()
            .map(|(i, (name, to))| {
                let here = i == last;
                view! {
                    {(i > 0).then_some(" / ")}
                    <button type="button" class="link" data-testid="workspace-crumb" disabled=here
                        aria-current=here.then_some("location") on:click=move |_| folder.set(to.clone())>
                        {name}
                    </button>
                }
            })
            .collect_view()
    };
    let rows = move || {
        listing.get().map(|l| {
            if l.entries.is_empty() {
                return view! { <p class="muted" data-testid="workspace-empty">"No files here yet."</p> }.into_any();
            }
            let rows = l.entries.into_iter().map(|e| view! { <EntryRow chat_id=cid.get_value() entry=e folder /> });
            view! {
                <table class="workspace-table" data-testid="workspace-table">
                    <caption class="sr-only">{format!("Files in /workspace/{}", l.path)}</caption>
                    <thead><tr>
                        <th scope="col">"Name"</th><th scope="col">"Size"</th><th scope="col">"Changed"</th>
                        <th scope="col">"Made by"</th><th scope="col">"Download"</th>
                    </tr></thead>
                    <tbody>{rows.collect_view()}</tbody>
                </table>
            }
            .into_any()
        })
    };
    view! {
        <section class="workspace-files" data-testid="workspace-files" aria-label="Workspace files">
            <nav class="workspace-trail" aria-label="Folder">{crumbs}</nav>
            {move || {
                let has_files = listing.with(|l| l.as_ref().is_some_and(|l| !l.entries.is_empty()));
                has_files.then(|| {
                    let at = folder.get();
                    let label = if at.is_empty() { "Download the workspace as a zip".to_owned() } else { format!("Download {at} as a zip") };
                    view! {
                        <a class="workspace-zip" data-testid="workspace-zip" href=crate::api::workspace_zip_url(&cid.get_value(), &at)
                            download="">{label}</a>
                    }
                })
            }}
            {rows}
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
        </section>
    }
}

/// One file or folder: a folder opens; a file can be shared, and then downloads.
#[component]
fn EntryRow(chat_id: String, entry: WorkspaceEntry, folder: RwSignal<String>) -> impl IntoView {
    let changed = entry.modified_at.map(moment_of).unwrap_or_default();
    let made = entry.made_by.clone().map(|by| {
        view! { <a href=step_anchor(&by) data-testid="made-by">{format!("run {}", by.run)}</a> }
    });
    if entry.is_dir {
        let to = entry.path.clone();
        return view! {
            <tr data-testid="workspace-entry" data-kind="folder">
                <th scope="row">
                    <button type="button" class="link" data-testid="open-folder" on:click=move |_| folder.set(to.clone())
                        aria-label=format!("Open folder {}", entry.name)>
                        <span aria-hidden="true">"📁 "</span>{entry.name.clone()}"/"
                    </button>
                </th>
                <td></td><td>{changed}</td><td></td><td></td>
            </tr>
        }
        .into_any();
    }
    // A link (shown with where it leads, never followed) and what a copy leaves out (a
    // pipe, a socket, a dangling link) are named, not shared: there is nothing to read.
    if entry.link_target.is_some() || entry.left_out.is_some() {
        let kind = if entry.link_target.is_some() { "link" } else { "other" };
        let what = match (&entry.link_target, &entry.left_out) {
            (Some(target), None) => format!("link to {target}"),
            (Some(target), Some(why)) => format!("link to {target}: {why}, not copied"),
            (None, Some(why)) => format!("{why}, not copied"),
            (None, None) => String::new(),
        };
        return view! {
            <tr data-testid="workspace-entry" data-kind=kind>
                <th scope="row" class="path">{entry.name.clone()}</th>
                <td data-testid="entry-special" colspan="2">{what}</td>
                <td>{made}</td>
                <td></td>
            </tr>
        }
        .into_any();
    }
    // Shared before as it is now: its chip, not a button that would copy it again.
    let shared = RwSignal::new(entry.shared.clone());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let req = ShareFileRequest {
        path: entry.path.clone(),
        name: None,
        message_id: entry.made_by.as_ref().map(|b| b.message_id.clone()),
        step_id: entry.made_by.as_ref().map(|b| b.step_id.clone()),
    };
    let cid = chat_id.clone();
    let share = move |_| {
        let (req, cid) = (req.clone(), cid.clone());
        busy.set(true);
        leptos::task::spawn_local(async move {
            match crate::api::share_file(&cid, &req).await {
                Ok(file) => shared.set(Some(file)),
                Err(e) => error.set(Some(e.message)),
            }
            busy.set(false);
        });
    };
    let name = entry.name.clone();
    view! {
        <tr data-testid="workspace-entry" data-kind="file">
            <th scope="row" class="path">{entry.name.clone()}</th>
            <td>{size_words(entry.size)}</td>
            <td>{changed}</td>
            <td>{made}</td>
            <td>
                {move || match shared.get() {
                    Some(file) => view! { <FileChip chat_id=chat_id.clone() file /> }.into_any(),
                    None => view! {
                        <button type="button" data-testid="share-file" on:click=share.clone() disabled=move || busy.get()
                            aria-label=format!("Share {name}")>"Share"</button>
                    }.into_any(),
                }}
                <span class="error" role="alert">{move || error.get().unwrap_or_default()}</span>
            </td>
        </tr>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trails_and_anchors_read_plainly() {
        assert_eq!(trail(""), [("workspace".to_owned(), String::new())]);
        assert_eq!(
            trail("out/charts/"),
            [
                ("workspace".to_owned(), String::new()),
                ("out".to_owned(), "out".to_owned()),
                ("charts".to_owned(), "out/charts".to_owned())
            ]
        );
        let by = MadeBy { message_id: "m1".into(), step_id: "s2".into(), run: 3 };
        assert_eq!(step_anchor(&by), "#step-m1-s2");
    }
}

#[cfg(all(test, feature = "ssr"))]
mod ssr_tests {
    use super::*;

    #[test]
    fn a_file_row_names_its_size_date_maker_and_share_and_a_folder_opens() {
        let owner = Owner::new();
        owner.set();
        let folder = RwSignal::new(String::new());
        let file = WorkspaceEntry {
            name: "<b>data</b>.csv".into(),
            path: "out/<b>data</b>.csv".into(),
            size: 12_300,
            is_dir: false,
            modified_at: Some(1_796_515_200_000),
            made_by: Some(MadeBy { message_id: "m1".into(), step_id: "s2".into(), run: 4 }),
            link_target: None,
            left_out: None,
            shared: None,
        };
        let html = view! { <EntryRow chat_id="c".to_owned() entry=file.clone() folder /> }.to_html();
        assert!(html.contains("&lt;b&gt;data&lt;/b&gt;.csv") && !html.contains("<b>"), "names are text: {html}");
        assert!(html.contains("13 KB") && html.contains("2026-12-06 00:00 UTC"), "{html}");
        assert!(html.contains("href=\"#step-m1-s2\"") && html.contains("run 4"), "{html}");
        assert!(html.contains("aria-label=\"Share &lt;b&gt;data&lt;/b&gt;.csv\""), "{html}");
        // Shared before as it is now: the share's chip, no button to copy it again.
        let share = lens_types::SharedFileRef {
            id: "f1".into(),
            name: "data.csv".into(),
            size: 12_300,
            mime: "text/csv".into(),
        };
        let shared = WorkspaceEntry { shared: Some(share), ..file };
        let html = view! { <EntryRow chat_id="c".to_owned() entry=shared folder /> }.to_html();
        assert!(!html.contains("data-testid=\"share-file\"") && html.contains("/files/f1"), "{html}");
        let dir = WorkspaceEntry {
            name: "out".into(),
            path: "out".into(),
            size: 0,
            is_dir: true,
            modified_at: None,
            made_by: None,
            link_target: None,
            left_out: None,
            shared: None,
        };
        let html = view! { <EntryRow chat_id="c".to_owned() entry=dir folder /> }.to_html();
        assert!(html.contains("aria-label=\"Open folder out\"") && !html.contains("Share"), "{html}");
    }

    #[test]
    fn a_link_says_where_it_leads_and_a_pipe_that_it_is_not_copied_neither_shared() {
        let owner = Owner::new();
        owner.set();
        let folder = RwSignal::new(String::new());
        let entry = |name: &str, link_target: Option<&str>, left_out: Option<&str>| WorkspaceEntry {
            name: name.into(),
            path: format!("env/{name}"),
            size: 0,
            is_dir: false,
            modified_at: None,
            made_by: None,
            link_target: link_target.map(Into::into),
            left_out: left_out.map(Into::into),
            shared: None,
        };
        let link = entry("python", Some("/usr/bin/<b>python3"), None);
        let html = view! { <EntryRow chat_id="c".to_owned() entry=link folder /> }.to_html();
        assert!(html.contains("data-kind=\"link\"") && html.contains("link to /usr/bin/&lt;b&gt;python3"), "{html}");
        assert!(!html.contains("Share") && !html.contains("Open folder"), "{html}");
        let pipe = entry("queue", None, Some("a named pipe"));
        let html = view! { <EntryRow chat_id="c".to_owned() entry=pipe folder /> }.to_html();
        assert!(html.contains("data-kind=\"other\"") && html.contains("a named pipe, not copied"), "{html}");
        assert!(!html.contains("Share"), "{html}");
    }
}
