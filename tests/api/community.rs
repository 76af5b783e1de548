//! The community's posts, categories and tags over HTTP.

use std::time::Duration;

use booktr_core::types::{Plan, Role};
use futures::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, eventually, TestApp, TestUser};

const POSTS: &str = "/api/community/posts";

async fn create(app: &TestApp, user: &TestUser, body: Value) -> reqwest::Response {
    app.send_json(Method::POST, POSTS, &user.key, body).await
}

async fn created(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let response = create(app, user, body).await;
    assert_eq!(response.status(), 201);
    response.json::<Value>().await.unwrap()["post"].clone()
}

async fn json_of(response: reqwest::Response) -> Value {
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

async fn admin(app: &TestApp) -> TestUser {
    app.user_with(Plan::Free, Role::Admin).await
}

#[tokio::test]
async fn a_fresh_store_has_seeded_categories_and_admins_add_categories_and_tags() {
    let app = TestApp::new().with_workers().start().await;
    let listed = json_of(app.get_anonymous("/api/community/categories").await).await;
    let categories = listed["categories"].as_array().unwrap();
    assert!(categories.len() >= 5, "{listed}");
    let general = categories.iter().find(|c| c["slug"] == "general").unwrap();
    assert_eq!(general["color"].as_str().unwrap().len(), 7);
    assert_eq!(
        json_of(app.get_anonymous("/api/community/tags").await).await,
        json!({"tags": []})
    );

    let boss = admin(&app).await;
    let response = app
        .send_json(
            Method::POST,
            "/api/admin/community/categories",
            &boss.key,
            json!({"name": "Poésie épique", "description": "Long poems", "color": "#aa00ff"}),
        )
        .await;
    assert_eq!(response.status(), 201);
    let category = response.json::<Value>().await.unwrap()["category"].clone();
    assert_eq!(category["slug"], "poesie-epique");
    assert_eq!(category["color"], "#AA00FF");
    let response = app
        .send_json(
            Method::POST,
            "/api/admin/community/tags",
            &boss.key,
            json!({"name": "Melville"}),
        )
        .await;
    assert_eq!(response.status(), 201);
    let tags = json_of(app.get_anonymous("/api/community/tags").await).await;
    assert_eq!(tags["tags"][0]["slug"], "melville");

    // A taken slug, a bad colour, and anyone but an admin are refused.
    for (path, body) in [
        (
            "/api/admin/community/tags",
            json!({"name": "x", "slug": "melville"}),
        ),
        (
            "/api/admin/community/categories",
            json!({"name": "x", "color": "red"}),
        ),
        (
            "/api/admin/community/tags",
            json!({"name": "x", "slug": "Not A Slug"}),
        ),
    ] {
        let response = app.send_json(Method::POST, path, &boss.key, body).await;
        assert_error(response, 400, "bad_request").await;
    }
    let user = app.user().await;
    for path in [
        "/api/admin/community/categories",
        "/api/admin/community/tags",
    ] {
        let response = app
            .send_json(Method::POST, path, &user.key, json!({"name": "Mine"}))
            .await;
        assert_error(response, 403, "forbidden").await;
        let response = app
            .anonymous(Method::POST, path)
            .json(&json!({"name": "x"}))
            .send()
            .await
            .unwrap();
        assert_error(response, 401, "unauthorized").await;
    }
}

#[tokio::test]
async fn a_post_is_a_draft_by_default_with_a_unique_transliterated_slug_and_an_excerpt() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let post = created(
        &app,
        &author,
        json!({"title": "¿Qué es Moby-Dick?", "content": "# Call me Ishmael\n\nSome **years** ago."}),
    )
    .await;
    assert_eq!(post["status"], "DRAFT");
    assert_eq!(post["slug"], "que-es-moby-dick");
    assert_eq!(post["excerpt"], "Call me Ishmael Some years ago.");
    assert_eq!(post["publishedAt"], Value::Null);
    assert_eq!(post["category"]["slug"], "general");
    assert_eq!(post["tags"], json!([]));
    assert_eq!(post["_count"], json!({"comments": 0, "reactions": 0}));
    assert_eq!(post["viewCount"], 0);
    assert_eq!(post["author"]["name"], "Test");
    assert!(post["author"].get("email").is_none());

    let again = created(
        &app,
        &author,
        json!({"title": "¿Qué es Moby-Dick?", "content": "Again.", "status": "PUBLISHED"}),
    )
    .await;
    assert_eq!(again["slug"], "que-es-moby-dick-2");
    assert_eq!(again["status"], "PUBLISHED");
    assert!(again["publishedAt"].as_str().is_some());
}

#[tokio::test]
async fn a_title_used_more_often_than_its_numbered_slugs_still_gets_a_unique_slug() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let mut slugs = std::collections::HashSet::new();
    for _ in 0..23 {
        let post = created(&app, &author, json!({"title": "file", "content": "x"})).await;
        assert!(slugs.insert(post["slug"].as_str().unwrap().to_string()));
    }
    assert!(slugs.contains("file-20"));
    let random: Vec<_> = slugs
        .iter()
        .filter(|s| s.len() == "file-".len() + 8)
        .collect();
    assert_eq!(
        random.len(),
        3,
        "three posts past file-20 got random suffixes: {slugs:?}"
    );
}

#[tokio::test]
async fn invalid_posts_are_refused_with_400_and_free_unverified_accounts_cannot_publish() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let long = "a".repeat(100_001);
    for body in [
        json!({"title": "", "content": "x"}),
        json!({"title": "t", "content": ""}),
        json!({"title": "t", "content": long}),
        json!({"title": "t", "content": "x", "coverImage": "javascript:alert(1)"}),
        json!({"title": "t", "content": "x", "categorySlug": "no-such-category"}),
        json!({"title": "t", "content": "x", "tagSlugs": ["no-such-tag"]}),
        json!({"title": "t", "content": "x", "categoryId": "a", "categorySlug": "general"}),
        json!({"title": "t", "content": "x", "status": "ARCHIVED"}),
        json!({"title": "t", "content": "x", "unknown": true}),
    ] {
        assert_error(create(&app, &author, body).await, 400, "bad_request").await;
    }
    let free = app.user_with(Plan::Free, Role::User).await;
    let response = create(
        &app,
        &free,
        json!({"title": "t", "content": "x", "status": "PUBLISHED"}),
    )
    .await;
    let body = assert_error(response, 403, "forbidden").await;
    assert!(
        body["message"].as_str().unwrap().contains("DRAFT"),
        "{body}"
    );
    assert_eq!(
        create(&app, &free, json!({"title": "t", "content": "x"}))
            .await
            .status(),
        201
    );
}

#[tokio::test]
async fn drafts_are_seen_by_their_author_only_and_reads_count_views_atomically() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let other = app.user().await;
    let draft = created(
        &app,
        &author,
        json!({"title": "Secret", "content": "Not yet."}),
    )
    .await;
    let id = draft["id"].as_str().unwrap();
    for path in [format!("{POSTS}/{id}"), format!("{POSTS}/secret")] {
        assert_error(app.get_anonymous(&path).await, 404, "not_found").await;
        assert_error(app.get(&path, &other.key).await, 404, "not_found").await;
        let seen = json_of(app.get(&path, &author.key).await).await;
        assert_eq!(seen["post"]["id"], id);
        assert_eq!(
            seen["post"]["viewCount"], 0,
            "an author's reads are not views"
        );
    }
    let anonymous_list = json_of(app.get_anonymous(POSTS).await).await;
    assert_eq!(anonymous_list["pagination"]["total"], 0);
    let own_list = json_of(app.get(POSTS, &author.key).await).await;
    assert_eq!(own_list["posts"][0]["id"], id);

    let public = created(
        &app,
        &author,
        json!({"title": "Public", "content": "Hello.", "status": "PUBLISHED"}),
    )
    .await;
    let path = format!("{POSTS}/{}", public["slug"].as_str().unwrap());
    let reads = join_all((0..20).map(|_| app.get_anonymous(&path))).await;
    assert!(reads.iter().all(|r| r.status() == 200));
    let after = json_of(app.get(&path, &author.key).await).await;
    assert_eq!(after["post"]["viewCount"], 20);
}

#[tokio::test]
async fn the_list_pages_and_filters_by_category_tag_and_featured() {
    let app = TestApp::new().with_workers().start().await;
    let boss = admin(&app).await;
    for (path, body) in [
        ("/api/admin/community/categories", json!({"name": "Essays"})),
        ("/api/admin/community/tags", json!({"name": "Whales"})),
    ] {
        assert_eq!(
            app.send_json(Method::POST, path, &boss.key, body)
                .await
                .status(),
            201
        );
    }
    let author = app.user().await;
    for n in 0..15 {
        let mut body =
            json!({"title": format!("Post {n}"), "content": "Text.", "status": "PUBLISHED"});
        if n % 3 == 0 {
            body["categorySlug"] = json!("essays");
        }
        if n % 5 == 0 {
            body["tagSlugs"] = json!(["whales"]);
        }
        let post = created(&app, &author, body).await;
        if n == 7 {
            let path = format!(
                "/api/admin/community/posts/{}",
                post["id"].as_str().unwrap()
            );
            // Only staff feature posts.
            let refused = app
                .send_json(Method::PATCH, &path, &author.key, json!({"featured": true}))
                .await;
            assert_error(refused, 403, "forbidden").await;
            let featured = json_of(
                app.send_json(Method::PATCH, &path, &boss.key, json!({"featured": true}))
                    .await,
            )
            .await;
            assert_eq!(featured["post"]["featured"], true);
        }
    }
    let missing = app
        .send_json(
            Method::PATCH,
            "/api/admin/community/posts/nope",
            &boss.key,
            json!({"featured": true}),
        )
        .await;
    assert_error(missing, 404, "not_found").await;
    let first = json_of(app.get_anonymous(&format!("{POSTS}?limit=10")).await).await;
    assert_eq!(
        first["pagination"],
        json!({"page": 1, "limit": 10, "total": 15, "totalPages": 2})
    );
    assert_eq!(first["posts"].as_array().unwrap().len(), 10);
    assert_eq!(first["posts"][0]["title"], "Post 14", "newest first");
    let second = json_of(app.get_anonymous(&format!("{POSTS}?limit=10&page=2")).await).await;
    assert_eq!(second["posts"].as_array().unwrap().len(), 5);

    let essays = json_of(app.get_anonymous(&format!("{POSTS}?category=essays")).await).await;
    assert_eq!(essays["pagination"]["total"], 5);
    assert!(essays["posts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["category"]["slug"] == "essays"));
    let whales = json_of(app.get_anonymous(&format!("{POSTS}?tag=whales")).await).await;
    assert_eq!(whales["pagination"]["total"], 3);
    assert_eq!(whales["posts"][0]["tags"][0]["name"], "Whales");
    let featured = json_of(app.get_anonymous(&format!("{POSTS}?featured=true")).await).await;
    assert_eq!(featured["pagination"]["total"], 1);
    assert_eq!(featured["posts"][0]["title"], "Post 7");
    let others = json_of(app.get_anonymous(&format!("{POSTS}?featured=false")).await).await;
    assert_eq!(others["pagination"]["total"], 14);
    let unknown = json_of(app.get_anonymous(&format!("{POSTS}?tag=nothing")).await).await;
    assert_eq!(unknown["pagination"]["total"], 0);
    for bad in ["page=0", "limit=51", "limit=x", "featured=yes"] {
        assert_error(
            app.get_anonymous(&format!("{POSTS}?{bad}")).await,
            400,
            "bad_request",
        )
        .await;
    }
}

#[tokio::test]
async fn a_closed_accounts_posts_go_with_it() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let post = created(
        &app,
        &author,
        json!({"title": "Leaving", "content": "Bye.", "status": "PUBLISHED"}),
    )
    .await;
    let response = app
        .send_json(
            Method::DELETE,
            "/api/user/delete",
            &author.key,
            json!({"confirmation": "DELETE MY ACCOUNT"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let path = format!("{POSTS}/{}", post["id"].as_str().unwrap());
    // The purge is a queued job that is retried after a back-off when it ran before the
    // account closed: polled as a DEV reader (never rate-limited) for up to 40 s, with the
    // test's clock moving on so that a retry comes due, then looked at as the public sees it.
    let reader = app.user_with(Plan::Free, Role::Dev).await;
    eventually(Duration::from_secs(40), || async {
        let status = app.get(&path, &reader.key).await.status();
        if status == 404 {
            return Ok(());
        }
        app.pass_time(Duration::from_millis(100)).await;
        Err(format!("{path} still answers {status}"))
    })
    .await;
    assert_error(app.get_anonymous(&path).await, 404, "not_found").await;
    let other = app.user().await;
    let again = created(&app, &other, json!({"title": "Leaving", "content": "Hi."})).await;
    assert_eq!(again["slug"], "leaving", "the slug was freed");
}

const COMMENTS: &str = "/api/community/comments";

async fn comment(app: &TestApp, user: &TestUser, body: Value) -> reqwest::Response {
    app.send_json(Method::POST, COMMENTS, &user.key, body).await
}

async fn commented(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let response = comment(app, user, body).await;
    assert_eq!(response.status(), 201);
    response.json::<Value>().await.unwrap()["comment"].clone()
}

async fn published(app: &TestApp, author: &TestUser, title: &str) -> Value {
    created(
        app,
        author,
        json!({"title": title, "content": "Text.", "status": "PUBLISHED"}),
    )
    .await
}

#[tokio::test]
async fn replies_nest_three_deep_count_on_the_post_and_notify_the_parents_author() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let (ann, bob) = (app.user().await, app.user().await);
    let post = published(&app, &author, "Whales").await;
    let slug = post["slug"].as_str().unwrap();
    let top = commented(
        &app,
        &ann,
        json!({"postSlug": slug, "content": "First!", "mood": "EXCITED"}),
    )
    .await;
    assert_eq!(top["status"], "APPROVED");
    assert_eq!(top["mood"], "EXCITED");
    let reply = commented(
        &app,
        &bob,
        json!({"postId": post["id"], "parentId": top["id"], "content": "Second."}),
    )
    .await;
    let deeper = commented(
        &app,
        &ann,
        json!({"postId": post["id"], "parentId": reply["id"], "content": "Third."}),
    )
    .await;
    let listed = json_of(
        app.get_anonymous(&format!("{COMMENTS}?postSlug={slug}"))
            .await,
    )
    .await;
    let tree = &listed["comments"];
    assert_eq!(tree.as_array().unwrap().len(), 1);
    assert_eq!(tree[0]["id"], top["id"]);
    assert_eq!(tree[0]["replies"][0]["id"], reply["id"]);
    assert_eq!(tree[0]["replies"][0]["replies"][0]["id"], deeper["id"]);
    assert_eq!(tree[0]["replies"][0]["replies"][0]["replies"], json!([]));
    assert_eq!(tree[0]["author"]["name"], "Test");

    let seen = json_of(app.get_anonymous(&format!("{POSTS}/{slug}")).await).await;
    assert_eq!(seen["post"]["_count"]["comments"], 3);
    // Bob's reply told Ann; Ann's reply to Bob told Bob.
    for (user, replies) in [(&ann, 1), (&bob, 1), (&author, 0)] {
        let notes = json_of(app.get("/api/notifications", &user.key).await).await;
        let count = notes["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["type"] == "COMMENT_REPLY")
            .count();
        assert_eq!(count, replies, "{notes}");
    }
}

#[tokio::test]
async fn invalid_comments_are_refused_and_drafts_take_no_comments() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let post = published(&app, &author, "Open").await;
    let draft = created(&app, &author, json!({"title": "Closed", "content": "x"})).await;
    assert_error(app.get_anonymous(COMMENTS).await, 400, "bad_request").await;
    for body in [
        json!({"postId": post["id"], "content": ""}),
        json!({"postId": post["id"], "content": "a".repeat(5_001)}),
        json!({"postId": post["id"], "content": "x", "mood": "ANGRY"}),
        json!({"postId": post["id"], "content": "x", "parentId": "nope"}),
        json!({"content": "x"}),
    ] {
        assert_error(comment(&app, &author, body).await, 400, "bad_request").await;
    }
    assert_eq!(
        comment(
            &app,
            &author,
            json!({"postId": post["id"], "content": "a".repeat(5_000)})
        )
        .await
        .status(),
        201
    );
    for body in [
        json!({"postId": draft["id"], "content": "x"}),
        json!({"postSlug": "no-such-post", "content": "x"}),
    ] {
        assert_error(comment(&app, &author, body).await, 404, "not_found").await;
    }
    assert_error(
        app.get_anonymous(&format!(
            "{COMMENTS}?postId={}",
            draft["id"].as_str().unwrap()
        ))
        .await,
        404,
        "not_found",
    )
    .await;
}

async fn moderate(app: &TestApp, admin: &TestUser, id: &Value, status: &str) -> reqwest::Response {
    app.send_json(
        Method::PATCH,
        &format!("/api/admin/comments/{}", id.as_str().unwrap()),
        &admin.key,
        json!({ "status": status }),
    )
    .await
}

#[tokio::test]
async fn a_free_accounts_comment_waits_for_an_admin_who_approves_or_marks_it_spam() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let post = published(&app, &author, "Moderated").await;
    let free = app.user_with(Plan::Free, Role::User).await;
    let pending = commented(
        &app,
        &free,
        json!({"postId": post["id"], "content": "Hello"}),
    )
    .await;
    assert_eq!(pending["status"], "PENDING");
    let path = format!("{COMMENTS}?postId={}", post["id"].as_str().unwrap());
    assert_eq!(
        json_of(app.get_anonymous(&path).await).await["comments"],
        json!([])
    );
    let own = json_of(app.get(&path, &free.key).await).await;
    assert_eq!(
        own["comments"][0]["status"], "PENDING",
        "its author sees it"
    );

    let boss = admin(&app).await;
    let queue = json_of(app.get("/api/admin/comments", &boss.key).await).await;
    assert_eq!(queue["comments"][0]["id"], pending["id"]);
    assert_eq!(
        moderate(&app, &boss, &pending["id"], "APPROVED")
            .await
            .status(),
        200
    );
    let public = json_of(app.get_anonymous(&path).await).await;
    assert_eq!(public["comments"][0]["content"], "Hello");
    let queue = json_of(app.get("/api/admin/comments", &boss.key).await).await;
    assert_eq!(queue["comments"], json!([]));
    let counted = json_of(
        app.get(
            &format!("{POSTS}/{}", post["id"].as_str().unwrap()),
            &author.key,
        )
        .await,
    )
    .await;
    assert_eq!(counted["post"]["_count"]["comments"], 1);

    assert_eq!(
        moderate(&app, &boss, &pending["id"], "SPAM").await.status(),
        200
    );
    assert_eq!(
        json_of(app.get_anonymous(&path).await).await["comments"],
        json!([])
    );
    let counted = json_of(
        app.get(
            &format!("{POSTS}/{}", post["id"].as_str().unwrap()),
            &author.key,
        )
        .await,
    )
    .await;
    assert_eq!(counted["post"]["_count"]["comments"], 0);
    assert_error(
        moderate(&app, &boss, &pending["id"], "GONE").await,
        400,
        "bad_request",
    )
    .await;
    assert_error(
        moderate(&app, &boss, &json!("nope"), "SPAM").await,
        404,
        "not_found",
    )
    .await;

    // Every admin route is for admins only.
    let user = app.user().await;
    assert_error(
        app.get("/api/admin/comments", &user.key).await,
        403,
        "forbidden",
    )
    .await;
    let response = app
        .send_json(
            Method::PATCH,
            &format!("/api/admin/comments/{}", pending["id"].as_str().unwrap()),
            &user.key,
            json!({"status": "APPROVED"}),
        )
        .await;
    assert_error(response, 403, "forbidden").await;
}

#[tokio::test]
async fn a_closed_accounts_comment_becomes_a_tombstone_that_keeps_its_replies() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let post = published(&app, &author, "Tombstones").await;
    let leaver = app.user().await;
    let stayer = app.user().await;
    let top = commented(
        &app,
        &leaver,
        json!({"postId": post["id"], "content": "My words"}),
    )
    .await;
    commented(
        &app,
        &stayer,
        json!({"postId": post["id"], "parentId": top["id"], "content": "A reply"}),
    )
    .await;
    let lonely = commented(
        &app,
        &leaver,
        json!({"postId": post["id"], "content": "Alone"}),
    )
    .await;
    let response = app
        .send_json(
            Method::DELETE,
            "/api/user/delete",
            &leaver.key,
            json!({"confirmation": "DELETE MY ACCOUNT"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let path = format!("{COMMENTS}?postId={}", post["id"].as_str().unwrap());
    // Polled as a DEV reader (never rate-limited) for up to 40 s, with the clock moving on:
    // the purge is a queued job, retried after a back-off when it ran before the account closed.
    let reader = app.user_with(Plan::Free, Role::Dev).await;
    eventually(Duration::from_secs(40), || async {
        let listed = json_of(app.get(&path, &reader.key).await).await;
        let all = listed["comments"].as_array().unwrap();
        if all.len() == 1 && all[0]["status"] == "DELETED" {
            return Ok(());
        }
        app.pass_time(Duration::from_millis(100)).await;
        Err(listed)
    })
    .await;
    let listed = json_of(app.get_anonymous(&path).await).await;
    let comments = listed["comments"].as_array().unwrap();
    assert_eq!(comments.len(), 1, "the lone comment is gone: {listed}");
    assert_ne!(comments[0]["id"], lonely["id"]);
    assert_eq!(comments[0]["content"], "[deleted comment]");
    assert_eq!(comments[0]["author"], Value::Null);
    assert_eq!(comments[0]["replies"][0]["content"], "A reply");
    assert!(!listed.to_string().contains("My words"));
    // Once the purge is through, nothing of the leaver is stored.
    eventually(Duration::from_secs(40), || async {
        let left = app.stored_mentions(&[leaver.id.as_str(), "My words"]).await;
        if left.is_empty() {
            Ok(())
        } else {
            Err(format!("left behind: {left:?}"))
        }
    })
    .await;
}
