//! `FilePreview`: a kept file opened beside its download: a CSV's first thousand rows,
//! sortable, with its row count; text and JSON coloured; Markdown under Lens's rules; a
//! notebook's cells; HTML and PDF in a frame from the preview origin (HTML sandboxed),
//! never from Lens's own. Everything from the file is shown as text.

use lens_types::{FilePreview as Preview, NotebookCell, NotebookOutput, TextSyntax};
use leptos::prelude::*;

use crate::components::markdown::Markdown;

/// "1,501": counts as people read them.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The order of two cells: as numbers when both are, else as text.
pub fn cell_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.cmp(b),
    }
}

/// JSON cut into coloured pieces: (class, text); whatever is not JSON stays plain text.
pub fn json_pieces(text: &str) -> Vec<(&'static str, String)> {
    let mut pieces = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut plain = String::new();
    while let Some((start, c)) = chars.next() {
        let class = match c {
            '"' => {
                let mut end = text.len();
                let mut escaped = false;
                for (i, d) in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if d == '\\' {
                        escaped = true;
                    } else if d == '"' {
                        end = i + 1;
                        break;
                    }
                }
                let rest = text[end..].trim_start();
                Some((if rest.starts_with(':') { "json-key" } else { "json-string" }, &text[start..end]))
            }
            '-' | '0'..='9' => {
                let mut end = start + c.len_utf8();
                while let Some(&(i, d)) = chars.peek() {
                    if !(d.is_ascii_digit() || matches!(d, '.' | 'e' | 'E' | '+' | '-')) {
                        break;
                    }
                    end = i + d.len_utf8();
                    chars.next();
                }
                Some(("json-number", &text[start..end]))
            }
            't' | 'f' | 'n' => ["true", "false", "null"].into_iter().find(|w| text[start..].starts_with(w)).map(|w| {
                for _ in 1..w.len() {
                    chars.next();
                }
                ("json-literal", &text[start..start + w.len()])
            }),
            _ => None,
        };
        match class {
            Some((class, piece)) => {
                if !plain.is_empty() {
                    pieces.push(("", std::mem::take(&mut plain)));
                }
                pieces.push((class, piece.to_owned()));
            }
            None => plain.push(c),
        }
    }
    if !plain.is_empty() {
        pieces.push(("", plain));
    }
    pieces
}

#[component]
pub fn FilePreview(chat_id: String, file_id: String, name: String) -> impl IntoView {
    let shown = RwSignal::new(None::<Result<Preview, crate::api::ClientError>>);
    let (cid, fid) = (chat_id.clone(), file_id.clone());
    leptos::task::spawn_local(async move {
        shown.set(Some(crate::api::file_preview(&cid, &fid).await));
    });
    let label = format!("Preview of {name}");
    let region = label.clone();
    view! {
        <div class="file-preview" data-testid="file-preview" role="region" aria-label=region>
            {move || match shown.get() {
                None => view! { <p class="muted" role="status">"Opening…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error" role="alert">{e.message}</p> }.into_any(),
                Some(Ok(preview)) => body(preview, chat_id.clone(), file_id.clone(), label.clone()),
            }}
        </div>
    }
}

fn body(preview: Preview, chat_id: String, file_id: String, label: String) -> AnyView {
    match preview {
        Preview::Table { rows, complete } => view! { <Table rows complete chat_id file_id /> }.into_any(),
        Preview::Text { syntax, text, cut } => {
            let more =
                cut.then(|| view! { <p class="muted">"The beginning of the file; download it for the rest."</p> });
            let text_view = match syntax {
                TextSyntax::Markdown => view! { <div class="markdown"><Markdown src=text /></div> }.into_any(),
                TextSyntax::Json => {
                    let pieces = json_pieces(&text)
                        .into_iter()
                        .map(|(class, piece)| view! { <span class=class>{piece}</span> })
                        .collect_view();
                    view! { <pre class="preview-text" data-testid="preview-text"><code>{pieces}</code></pre> }
                        .into_any()
                }
                TextSyntax::Plain => {
                    view! { <pre class="preview-text" data-testid="preview-text"><code>{text}</code></pre> }.into_any()
                }
            };
            view! { {text_view}{more} }.into_any()
        }
        Preview::Notebook { cells } => {
            let cells = cells.into_iter().enumerate().map(|(i, cell)| notebook_cell(i + 1, cell)).collect_view();
            view! { <ol class="notebook" data-testid="notebook">{cells}</ol> }.into_any()
        }
        Preview::Frame { url, sandboxed } => {
            // HTML runs its scripts with no origin of its own; a PDF has the browser's viewer.
            let sandbox = sandboxed.then_some("allow-scripts");
            view! {
                <iframe class="preview-frame" data-testid="preview-frame" src=url title=label sandbox=sandbox
                    referrerpolicy="no-referrer"></iframe>
            }
            .into_any()
        }
        Preview::Unavailable { reason } => {
            view! { <p class="muted" data-testid="preview-unavailable">{reason}</p> }.into_any()
        }
    }
}

fn notebook_cell(number: usize, cell: NotebookCell) -> impl IntoView {
    let source = if cell.cell_type == "markdown" {
        view! { <div class="markdown"><Markdown src=cell.source /></div> }.into_any()
    } else {
        view! { <pre class="notebook-source"><code>{cell.source}</code></pre> }.into_any()
    };
    let outputs = cell
        .outputs
        .into_iter()
        .map(|output| match output {
            NotebookOutput::Text { stream, text } => {
                let class = if matches!(stream.as_str(), "stderr" | "error") {
                    "notebook-output stderr"
                } else {
                    "notebook-output"
                };
                view! { <pre class=class>{text}</pre> }.into_any()
            }
            NotebookOutput::Image { mime, base64 } => {
                let alt = format!("An image cell {number} made");
                view! { <img class="notebook-image" src=format!("data:{mime};base64,{base64}") alt=alt /> }.into_any()
            }
        })
        .collect_view();
    view! {
        <li class="notebook-cell" data-testid="notebook-cell" data-type=cell.cell_type.clone()>
            {source}{outputs}
        </li>
    }
}

/// A table's rows: the header sorts by a column (again: the other way), a screen reader
/// hears the order; the count of all rows comes when the server has counted them.
#[component]
fn Table(rows: Vec<Vec<String>>, complete: bool, chat_id: String, file_id: String) -> impl IntoView {
    let mut rows = rows.into_iter();
    let header = rows.next().unwrap_or_default();
    let body: Vec<Vec<String>> = rows.collect();
    let shown = body.len() as u64;
    let sort = RwSignal::new(None::<(usize, bool)>);
    let total = RwSignal::new(complete.then_some(shown));
    if !complete {
        leptos::task::spawn_local(async move {
            if let Ok(count) = crate::api::file_rows(&chat_id, &file_id).await {
                total.set(Some(count.rows.saturating_sub(1)));
            }
        });
    }
    let count = move || match total.get() {
        Some(all) if all == shown => format!("{} rows", thousands(all)),
        Some(all) => format!("{} rows; the first {} are shown", thousands(all), thousands(shown)),
        None => format!("The first {} rows; counting all of them…", thousands(shown)),
    };
    let heads = header
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let order = move || match sort.get() {
                Some((c, true)) if c == i => "ascending",
                Some((c, false)) if c == i => "descending",
                _ => "none",
            };
            let flip = move |_| sort.update(|s| *s = Some((i, !matches!(*s, Some((c, true)) if c == i))));
            view! {
                <th scope="col" aria-sort=order>
                    <button type="button" class="link" data-testid="sort-column" on:click=flip>{name}</button>
                </th>
            }
        })
        .collect_view();
    let body = StoredValue::new(body);
    let lines = move || {
        let mut order: Vec<usize> = (0..body.with_value(|b| b.len())).collect();
        if let Some((column, ascending)) = sort.get() {
            body.with_value(|b| {
                let cell = |r: usize| b[r].get(column).map(String::as_str).unwrap_or("");
                order.sort_by(|&x, &y| {
                    let o = cell_order(cell(x), cell(y));
                    if ascending { o } else { o.reverse() }
                });
            });
        }
        body.with_value(|b| {
            order
                .into_iter()
                .map(|r| {
                    let cells = b[r].iter().map(|c| view! { <td>{c.clone()}</td> }).collect_view();
                    view! { <tr>{cells}</tr> }
                })
                .collect_view()
        })
    };
    view! {
        <p class="muted" role="status" data-testid="row-count">{count}</p>
        <div class="preview-table-wrap">
            <table class="preview-table" data-testid="preview-table">
                <thead><tr>{heads}</tr></thead>
                <tbody>{lines}</tbody>
            </table>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_orders_and_json_read_as_expected() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1_501), "1,501");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(cell_order("9", "10"), std::cmp::Ordering::Less);
        assert_eq!(cell_order("b", "a"), std::cmp::Ordering::Greater);
        assert_eq!(
            json_pieces(r#"{"a": [1.5, "x", true]}"#),
            [
                ("", "{".to_owned()),
                ("json-key", "\"a\"".to_owned()),
                ("", ": [".to_owned()),
                ("json-number", "1.5".to_owned()),
                ("", ", ".to_owned()),
                ("json-string", "\"x\"".to_owned()),
                ("", ", ".to_owned()),
                ("json-literal", "true".to_owned()),
                ("", "]}".to_owned()),
            ]
        );
        // Cut JSON and non-JSON stay whole text.
        let cut = json_pieces("{\"unended");
        assert_eq!(cut.iter().map(|(_, t)| t.as_str()).collect::<String>(), "{\"unended");
        assert_eq!(json_pieces("nope é"), [("", "nope é".to_owned())]);
    }
}

#[cfg(all(test, feature = "ssr"))]
mod ssr_tests {
    use super::*;

    fn html(preview: Preview) -> String {
        let owner = Owner::new();
        owner.set();
        body(preview, "c".into(), "f".into(), "Preview of x".into()).to_html()
    }

    #[test]
    fn what_a_file_holds_is_shown_as_text_and_html_only_in_a_sandboxed_frame() {
        let table = html(Preview::Table {
            rows: vec![vec!["n".into(), "<b>name</b>".into()], vec!["1".into(), "<script>x()</script>".into()]],
            complete: true,
        });
        assert!(table.contains("&lt;script&gt;x()&lt;/script&gt;") && !table.contains("<script>"), "{table}");
        assert!(table.contains("aria-sort=\"none\"") && table.contains("1 rows"), "{table}");
        let text = html(Preview::Text { syntax: TextSyntax::Json, text: "{\"a\": \"<i>\"}".into(), cut: true });
        assert!(text.contains("class=\"json-key\"") && text.contains("&lt;i&gt;") && !text.contains("<i>"), "{text}");
        assert!(text.contains("download it for the rest"), "{text}");
        let notebook = html(Preview::Notebook {
            cells: vec![NotebookCell {
                cell_type: "code".into(),
                source: "print('<img src=x onerror=alert(1)>')".into(),
                outputs: vec![
                    NotebookOutput::Text { stream: "stderr".into(), text: "<b>boom</b>".into() },
                    NotebookOutput::Image { mime: "image/png".into(), base64: "iVBORw==".into() },
                ],
            }],
        });
        assert!(!notebook.contains("<img src=x") && notebook.contains("notebook-output stderr"), "{notebook}");
        assert!(
            notebook.contains("src=\"data:image/png;base64,iVBORw==\"")
                && notebook.contains("alt=\"An image cell 1 made\"")
        );
        let frame = html(Preview::Frame { url: "http://127.0.0.1:9/f/a".into(), sandboxed: true });
        assert!(frame.contains("sandbox=\"allow-scripts\"") && frame.contains("title=\"Preview of x\""), "{frame}");
        let pdf = html(Preview::Frame { url: "http://127.0.0.1:9/f/b".into(), sandboxed: false });
        assert!(!pdf.contains("sandbox="), "{pdf}");
    }
}
