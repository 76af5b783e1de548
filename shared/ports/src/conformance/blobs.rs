//! The `Blobs` contract, case by case. Invoke with `booktr_ports::blobs_conformance!(make)`
//! where `make` is an async fn returning a `Fixture<dyn Blobs>`.

use bytes::Bytes;

use super::unique;
use crate::{BlobKey, Blobs};

#[macro_export]
macro_rules! blobs_conformance {
    ($make:path) => {
        $crate::blobs_conformance!($make, when = $crate::conformance::always);
    };
    ($make:path, when = $when:path) => {
        $crate::__conformance_cases!(
            blobs,
            $make,
            $when,
            port,
            [
                a_stored_blob_reads_back_byte_for_byte,
                a_put_replaces_the_previous_blob,
                a_missing_blob_is_none_and_deleting_it_succeeds,
                list_returns_the_keys_under_a_prefix_in_order,
                delete_prefix_removes_only_that_prefix,
            ]
        );
    };
}

fn key(raw: &str) -> BlobKey {
    BlobKey::parse(raw).unwrap()
}

pub async fn a_stored_blob_reads_back_byte_for_byte(blobs: &dyn Blobs) {
    let k = key(&format!("{}/data.bin", unique("t")));
    let bytes: Bytes = (0..3_000_000u32)
        .map(|i| (i % 251) as u8)
        .collect::<Vec<_>>()
        .into();
    blobs.put(&k, bytes.clone()).await.unwrap();
    assert_eq!(blobs.get(&k).await.unwrap(), Some(bytes));
    let empty = key(&format!("{}/empty", unique("t")));
    blobs.put(&empty, Bytes::new()).await.unwrap();
    assert_eq!(blobs.get(&empty).await.unwrap(), Some(Bytes::new()));
}

pub async fn a_put_replaces_the_previous_blob(blobs: &dyn Blobs) {
    let k = key(&format!("{}/a.txt", unique("t")));
    blobs
        .put(&k, Bytes::from_static(b"a much longer first version"))
        .await
        .unwrap();
    blobs.put(&k, Bytes::from_static(b"second")).await.unwrap();
    assert_eq!(
        blobs.get(&k).await.unwrap(),
        Some(Bytes::from_static(b"second"))
    );
}

pub async fn a_missing_blob_is_none_and_deleting_it_succeeds(blobs: &dyn Blobs) {
    let k = key(&format!("{}/missing", unique("t")));
    assert_eq!(blobs.get(&k).await.unwrap(), None);
    blobs.delete(&k).await.unwrap();
    blobs.put(&k, Bytes::from_static(b"x")).await.unwrap();
    blobs.delete(&k).await.unwrap();
    assert_eq!(blobs.get(&k).await.unwrap(), None);
}

pub async fn list_returns_the_keys_under_a_prefix_in_order(blobs: &dyn Blobs) {
    let root = unique("t");
    for name in ["b/2.txt", "a.txt", "b/1.txt", "bb.txt"] {
        blobs
            .put(&key(&format!("{root}/{name}")), Bytes::from_static(b"x"))
            .await
            .unwrap();
    }
    let listed = |prefix: String| async move {
        blobs
            .list(&prefix)
            .await
            .unwrap()
            .iter()
            .map(|k| k.as_str().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        listed(format!("{root}/b/")).await,
        [format!("{root}/b/1.txt"), format!("{root}/b/2.txt")]
    );
    assert_eq!(
        listed(format!("{root}/b")).await.len(),
        3,
        "a plain string prefix also matches bb.txt"
    );
    assert_eq!(listed(format!("{root}/")).await.len(), 4);
    assert!(listed(unique("none")).await.is_empty());
}

pub async fn delete_prefix_removes_only_that_prefix(blobs: &dyn Blobs) {
    let root = unique("t");
    for name in [
        "book1/original.txt",
        "book1/chapters/00001.txt",
        "book10/original.txt",
    ] {
        blobs
            .put(&key(&format!("{root}/{name}")), Bytes::from_static(b"x"))
            .await
            .unwrap();
    }
    let removed = crate::blobs::delete_prefix(blobs, &format!("{root}/book1/"))
        .await
        .unwrap();
    assert_eq!(removed, 2);
    let left: Vec<_> = blobs
        .list(&format!("{root}/"))
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.as_str().to_string())
        .collect();
    assert_eq!(left, [format!("{root}/book10/original.txt")]);
}
