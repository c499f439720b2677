//! `RunImages`: the images a run made, shown beneath its folded step so a person sees
//! the chart they asked for without opening the run.

use lens_types::SharedFileRef;
use leptos::prelude::*;

use crate::api::chat_image_url;

/// Images a run made, shown inline. Served by Lens as images only (never as markup),
/// so an SVG cannot run script here.
#[component]
pub fn RunImages(chat_id: String, images: Vec<SharedFileRef>) -> impl IntoView {
    (!images.is_empty()).then(|| {
        view! {
            <div class="run-images">
                {images.into_iter().map(|img| view! {
                    <img data-testid="run-image" loading="lazy" alt=format!("Image the run made: {}", img.name)
                        src=chat_image_url(&chat_id, &img.id) />
                }).collect_view()}
            </div>
        }
    })
}
