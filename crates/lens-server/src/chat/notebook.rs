//! A conversation as a Jupyter notebook (nbformat 4.5): each question and answer a
//! Markdown cell, each run a code cell with its saved outputs (stdout, stderr, images),
//! in the order they ran, so that running it top to bottom does what the runs did. Bash
//! runs become `%%bash` cells.

use base64::{Engine, engine::general_purpose::STANDARD as B64};
use lens_types::{MessageView, Role, RunOutput};
use serde_json::{Value, json};

use crate::files::{Vault, preview::head};

/// Images larger than this stay out of the notebook (the runs' images are 2 MB at most).
const IMAGE_MAX: usize = 2 * 1024 * 1024;

/// The notebook of conversation `chat_id` titled `title`; images come from `vault`.
pub async fn notebook(title: &str, chat_id: &str, messages: &[MessageView], vault: &Vault) -> Value {
    let mut cells = vec![markdown_cell(0, &format!("# {}", one_line(title)))];
    let mut runs = 0;
    for message in messages {
        match message.role {
            Role::User => cells.push(markdown_cell(cells.len(), &format!("**Question**\n\n{}", message.text))),
            Role::Assistant => {
                for output in message.steps.iter().filter_map(|s| s.output.as_ref()) {
                    runs += 1;
                    cells.push(code_cell(cells.len(), runs, output, chat_id, vault).await);
                }
                if !message.text.trim().is_empty() {
                    cells.push(markdown_cell(cells.len(), &format!("**Answer**\n\n{}", message.text)));
                }
            }
        }
    }
    json!({
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "lens": {"chat_id": chat_id},
        },
        "cells": cells,
    })
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// nbformat's multi-line text: a list of lines, each with its line end.
fn lines(text: &str) -> Value {
    Value::Array(text.split_inclusive('\n').map(|l| Value::String(l.to_owned())).collect())
}

fn markdown_cell(index: usize, text: &str) -> Value {
    json!({"cell_type": "markdown", "id": format!("cell-{index}"), "metadata": {}, "source": lines(text)})
}

async fn code_cell(index: usize, count: usize, run: &RunOutput, chat_id: &str, vault: &Vault) -> Value {
    let source = match run.language.as_str() {
        "bash" | "sh" | "shell" => format!("%%bash\n{}", run.code),
        _ => run.code.clone(),
    };
    let mut outputs = Vec::new();
    for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        if !text.is_empty() {
            outputs.push(json!({"output_type": "stream", "name": name, "text": lines(text)}));
        }
    }
    for image in &run.images {
        if !matches!(image.mime.as_str(), "image/png" | "image/jpeg" | "image/gif" | "image/svg+xml") {
            continue;
        }
        let Ok((bytes, true)) = head(vault, chat_id, &image.id, IMAGE_MAX + 1).await else { continue };
        if bytes.len() > IMAGE_MAX {
            continue;
        }
        // SVG is text in a notebook; the others are base64.
        let data = if image.mime == "image/svg+xml" {
            Value::String(String::from_utf8_lossy(&bytes).into_owned())
        } else {
            Value::String(B64.encode(&bytes))
        };
        outputs.push(json!({
            "output_type": "display_data",
            "metadata": {},
            "data": {image.mime.as_str(): data, "text/plain": [format!("<{}>", image.name)]},
        }));
    }
    json!({
        "cell_type": "code",
        "id": format!("cell-{index}"),
        "metadata": {},
        "execution_count": count,
        "source": lines(&source),
        "outputs": outputs,
    })
}

/// The notebook's file name, after the conversation's title.
pub fn file_name(title: &str) -> String {
    format!("{}.ipynb", crate::files::names::title_for_file(title, 80))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_becomes_lines_and_names_are_safe() {
        assert_eq!(lines("a\nb"), json!(["a\n", "b"]));
        assert_eq!(lines(""), json!([]));
        assert_eq!(file_name("Sales / Q3: <draft>"), "Sales Q3 draft.ipynb");
        assert_eq!(file_name("///"), "conversation.ipynb");
    }
}
