//! Nothing but the binaries in `src/bin/`: each is a few lines over `booktr_functions::lambda`.
