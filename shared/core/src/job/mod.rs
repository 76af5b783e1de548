//! The job vocabulary: the units of background work any domain may queue (`Job`, sent to its
//! queue, the jobs or the render queue, with `Job::enqueue`), and the files a book can be rendered as (`OutputFormat`,
//! `Layout`, `Edition`). How each job is processed lives at the top, in `crate::jobs`.

mod model;
mod service;

pub use model::{Edition, Job, Layout, OutputFormat};
