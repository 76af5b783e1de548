//! The `Clock` contract. Invoke with `booktr_ports::clock_conformance!(make)` where `make` is an
//! async fn returning a `Fixture<dyn Clock>`.

use chrono::Timelike;

use crate::Clock;

#[macro_export]
macro_rules! clock_conformance {
    ($make:path) => {
        $crate::clock_conformance!($make, when = $crate::conformance::always);
    };
    ($make:path, when = $when:path) => {
        $crate::__conformance_cases!(
            clock,
            $make,
            $when,
            port,
            [time_never_goes_backwards, time_has_millisecond_precision,]
        );
    };
}

pub async fn time_never_goes_backwards(clock: &dyn Clock) {
    let mut last = clock.now();
    for _ in 0..1000 {
        let now = clock.now();
        assert!(now >= last, "{now} is before {last}");
        last = now;
    }
}

pub async fn time_has_millisecond_precision(clock: &dyn Clock) {
    for _ in 0..100 {
        assert_eq!(
            clock.now().nanosecond() % 1_000_000,
            0,
            "stored times are whole milliseconds"
        );
    }
}
