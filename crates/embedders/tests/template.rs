//! Document templates, checked against what Meilisearch 1.50 rendered for the same documents
//! and templates (observed through `POST /render-template` and a REST embedder on loopback).

use api_types::Code;
use embedders::template::{truncate, validate_setting, DEFAULT_MAX_BYTES, DEFAULT_TEMPLATE};
use embedders::DocumentTemplate;
use serde_json::{json, Map, Value};

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn all(_: &str) -> bool {
    true
}

fn rich() -> Map<String, Value> {
    obj(
        json!({"id":1,"title":"Hello","n":3.5,"i":42,"neg":-1,"b":true,"nul":null,
        "arr":[1,"two",{"x":1},null,2.5],"obj":{"a":{"b":"deep"},"c":[1,2]},"emptyarr":[],
        "emptyobj":{},"s":"with \"quotes\"\nnewline","big":1e20,"f":1.0,"str_empty":""}),
    )
}

fn render(template: &str, doc: &Map<String, Value>) -> String {
    DocumentTemplate::new(Some(template), None)
        .unwrap()
        .render(doc, &all)
        .unwrap()
}

#[test]
fn default_template_is_meilisearchs() {
    assert_eq!(
        DEFAULT_TEMPLATE,
        "{% for field in fields %}{% if field.is_searchable and field.value != nil %}{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}"
    );
    assert_eq!(DEFAULT_MAX_BYTES, 400);
}

#[test]
fn default_template_renders_searchable_non_null_fields() {
    // searchableAttributes ["title","obj.a","s"]: `obj` itself is not searchable.
    let doc = obj(json!({"id":1,"title":"Hello","n":3.5,"nul":null,
        "arr":[1,"two",{"x":1},null,2.5],"obj":{"a":{"b":"deep"},"c":[1,2]},"emptyarr":[],
        "s":"héllo wörld çà"}));
    let searchable = |name: &str| matches!(name, "title" | "s");
    let t = DocumentTemplate::new(None, None).unwrap();
    assert_eq!(
        t.render(&doc, &searchable).unwrap(),
        "title: Hello\ns: héllo wörld çà\n"
    );
    // Every field searchable (Meilisearch sent this to the embedder, nulls left out).
    // Keys of a nested object come in no fixed order (Meilisearch rendered both orders too).
    let all_rendered = t
        .render(&rich(), &all)
        .unwrap()
        .replace("c12abdeep", "abdeepc12");
    assert_eq!(
        all_rendered,
        "id: 1\ntitle: Hello\nn: 3.5\ni: 42\nneg: -1\nb: true\narr: 1twox12.5\nobj: abdeepc12\nemptyarr: \nemptyobj: \ns: with \"quotes\"\nnewline\nbig: 100000000000000000000\nf: 1\nstr_empty: \n"
    );
}

#[test]
fn fields_list_in_document_order_with_values_rendered_like_meilisearch() {
    let out = render(
        "{% for field in fields %}{{field.name}}={{field.value}}|{{field.is_searchable}};{% endfor %}",
        &rich(),
    )
    .replace("c12abdeep", "abdeepc12");
    assert_eq!(
        out,
        "id=1|true;title=Hello|true;n=3.5|true;i=42|true;neg=-1|true;b=true|true;nul=|true;arr=1twox12.5|true;obj=abdeepc12|true;emptyarr=|true;emptyobj=|true;s=with \"quotes\"\nnewline|true;big=100000000000000000000|true;f=1|true;str_empty=|true;"
    );
    let inline = obj(json!({"s":"abcdef","x":[1,[2,3]]}));
    assert_eq!(
        render(
            "{% for field in fields %}{{field.name}}={{field.value}}|{{field.is_searchable}};{% endfor %}",
            &inline
        ),
        "s=abcdef|true;x=123|true;"
    );
    let searchable_only_a = |name: &str| name == "a";
    let t = DocumentTemplate::new(
        Some("{% for field in fields %}{{field.name}}:{{field.is_searchable}} {% endfor %}"),
        None,
    )
    .unwrap();
    assert_eq!(
        t.render(&obj(json!({"id":1,"a":"x"})), &searchable_only_a)
            .unwrap(),
        "id:false a:true "
    );
}

#[test]
fn doc_object_reaches_nested_fields() {
    assert_eq!(
        render(
            "{{ doc.arr[2].x }} {{ doc.obj.c | size }} {{fields.size}} {{fields[0].name}}",
            &rich()
        ),
        "1 2 15 id"
    );
    assert_eq!(render("{{doc.obj.a.b}}", &rich()), "deep");
    let two = obj(json!({"id":2,"zz":"y","b":null}));
    assert_eq!(render("{{doc.id | plus: 1}}|{{doc.b}}", &two), "3|");
    assert_eq!(
        render(
            "{% for field in fields %}{{field.name}}=[{{field.value}}]{% if field.value == nil %}NIL{% endif %};{% endfor %}",
            &two
        ),
        "id=[2];zz=[y];b=[]NIL;"
    );
}

#[test]
fn truncates_at_a_char_boundary() {
    let doc = obj(json!({"s":"héllo wörld çà","t":"abcdefghijklmnop"}));
    let t = DocumentTemplate::new(Some("{{doc.t}}"), Some(8)).unwrap();
    assert_eq!(t.render(&doc, &all).unwrap(), "abcdefgh");
    // "h" (1) + "é" (2) + "llo" (3) = 6 bytes; "é" at bytes 1..3 cannot be split at 2.
    let t = DocumentTemplate::new(Some("{{doc.s}}"), Some(2)).unwrap();
    assert_eq!(t.render(&doc, &all).unwrap(), "h");
    let long = "é".repeat(300);
    let t = DocumentTemplate::new(Some("{{doc.s}}"), None).unwrap();
    let out = t.render(&obj(json!({ "s": long })), &all).unwrap();
    assert_eq!(out.len(), 400);
    assert_eq!(truncate("aé".into(), 2), "a");
    assert_eq!(truncate("abc".into(), 10), "abc");
}

#[test]
fn parse_errors_at_settings_time_match_meilisearch() {
    let e = validate_setting("e", "{{doc.title").unwrap_err();
    assert_eq!(e.code, Code::InvalidSettingsEmbedders);
    assert_eq!(
        e.message,
        "`.embedders.e.documentTemplate`: Invalid template: user error: cannot parse template: liquid:  --> 1:3\n  |\n1 | {{doc.title\n  |   ^---\n  |\n  = expected Literal\n."
    );
    let e = validate_setting("f3", "{% if x %}").unwrap_err();
    assert_eq!(
        e.message,
        "`.embedders.f3.documentTemplate`: Invalid template: user error: cannot parse template: liquid:  --> 1:11\n  |\n1 | \n  | ^\n  |\n  = Unclosed block. {% endif %} tag expected.\n."
    );
    let e = validate_setting("e", "{{doc.title | nofilter}}").unwrap_err();
    assert!(e
        .message
        .starts_with("`.embedders.e.documentTemplate`: Invalid template: user error: cannot parse template: liquid: Unknown filter\n  with:\n    requested filter=nofilter\n    available filters=abs, append,"));
    // Unknown variables and the empty template pass the settings check.
    assert!(validate_setting("e", "{{foo.bar}}").is_ok());
    assert!(validate_setting("e", "").is_ok());
    assert!(validate_setting("e", DEFAULT_TEMPLATE).is_ok());
}

#[test]
fn render_route_errors_match_meilisearch() {
    let e = DocumentTemplate::new(Some("{{doc.title"), None).unwrap_err();
    assert_eq!(e.code, Code::TemplateParsingError);
    assert_eq!(
        e.message,
        "error while fetching template: user error: cannot parse template: liquid:  --> 1:3\n  |\n1 | {{doc.title\n  |   ^---\n  |\n  = expected Literal\n"
    );
    let t = DocumentTemplate::new(Some("{{ foo.bar }}"), None).unwrap();
    let e = t.render(&rich(), &all).unwrap_err();
    assert_eq!(e.code, Code::TemplateRenderingError);
    assert_eq!(
        e.message,
        "error while rendering template: user error: missing field in document: liquid: Unknown variable\n  with:\n    requested variable=foo\n"
    );
    let t = DocumentTemplate::new(Some("{{ doc.obj.a.z.q }}"), None).unwrap();
    assert_eq!(
        t.render(&rich(), &all).unwrap_err().message,
        "error while rendering template: user error: missing field in document: liquid: Unknown index\n  with:\n    variable=doc.obj.a\n    requested index=z\n    available indexes=b\n"
    );
}

#[test]
fn indexing_errors_match_meilisearch() {
    let doc = obj(json!({"id":1,"s":"x"}));
    let t = DocumentTemplate::new(Some("[{{doc.nothere}}]"), None).unwrap();
    let e = t.try_render(&doc, &all).unwrap_err().for_document("t", "1");
    assert_eq!(e.code, Code::InvalidDocumentFields);
    // Liquid lists the available keys in hash order.
    assert_eq!(
        e.message.replace("s, id", "id, s"),
        "Index `t`: user error: missing field in document `1`: liquid: Unknown index\n  with:\n    variable=doc\n    requested index=nothere\n    available indexes=id, s\n"
    );
}

#[test]
fn empty_template_renders_nothing() {
    assert_eq!(render("", &rich()), "");
}
