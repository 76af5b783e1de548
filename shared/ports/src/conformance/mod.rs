//! Port conformance suites: one per port, run against every adapter. An adapter crate's tests
//! invoke the suite's macro with a function that builds a fresh adapter; every case becomes its
//! own `#[tokio::test]`. Cases use unique keys, so a shared backend (a DynamoDB table on an
//! emulator) works as well as a fresh one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod blobs;
pub mod clock;
pub mod queue;
pub mod secrets;
pub mod table;

use std::any::Any;
use std::sync::Arc;

/// An adapter under test, with whatever must live as long as it (a temporary directory).
pub struct Fixture<P: ?Sized> {
    pub port: Arc<P>,
    pub keep_alive: Box<dyn Any + Send + Sync>,
}

/// The default precondition of a suite: its backend is always here. A suite whose backend may
/// be missing (an emulator) is invoked `table_conformance!(make, when = here)`, where `here`
/// says on the terminal why it skips and returns false.
pub fn always() -> bool {
    true
}

/// A fresh namespace for one case's keys.
pub fn unique(label: &str) -> String {
    format!("{label}-{}", crate::ids::new_id())
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_cases {
    ($suite:ident, $make:path, $when:path, $call:ident, [$($case:ident),* $(,)?]) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                if !$when() {
                    return;
                }
                $crate::__conformance_call!($call, $suite, $case, $make);
            }
        )*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_call {
    (port, $suite:ident, $case:ident, $make:path) => {{
        let fixture = $make().await;
        $crate::conformance::$suite::$case(fixture.port.as_ref()).await;
        drop(fixture);
    }};
    (harness, $suite:ident, $case:ident, $make:path) => {{
        let mut harness = $make().await;
        $crate::conformance::$suite::$case(&mut harness).await;
    }};
}
