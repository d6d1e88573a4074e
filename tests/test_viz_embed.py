"""Pictures as <img> elements with a data: URI, which untrusted notebooks show
(see autograd_kit.viz.embed), and the Binder setup that trusts every edition."""
import base64
import re
import subprocess
from pathlib import Path

from autograd_kit.viz.embed import alt_of, data_uri, img_html, svgs_as_images

ROOT = Path(__file__).resolve().parents[1]


def decoded(uri: str) -> str:
    assert uri.startswith("data:image/svg+xml;base64,")
    return base64.b64decode(uri.split(",", 1)[1]).decode("utf-8")


def test_data_uri_round_trips_any_language():
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><text>叶子张量 · листовой</text></svg>'
    assert decoded(data_uri(svg)) == svg


def test_an_svg_without_its_namespace_gets_it():
    # an SVG shown as an image must declare its namespace, or the browser shows nothing
    assert 'xmlns="http://www.w3.org/2000/svg"' in decoded(data_uri("<svg width='3'></svg>"))


def test_img_html_escapes_the_alt_text():
    html = img_html("<svg xmlns='http://www.w3.org/2000/svg'/>", 'x "<script>" & y\x07')
    assert 'alt="x &quot;&lt;script&gt;&quot; &amp; y\ufffd"' in html
    assert "<script>" not in html


def test_every_inline_svg_becomes_an_image_and_the_rest_stays():
    a = '<svg xmlns="http://www.w3.org/2000/svg" aria-label="first &amp; one"><g/></svg>'
    b = "<svg width='1'><title>second</title></svg>"
    html = f"<div><b>before</b>{a}<p>middle</p>{b}<i>after</i></div>"
    out = svgs_as_images(html)
    assert "<svg" not in out
    assert out.startswith("<div><b>before</b><img ") and "<p>middle</p>" in out
    assert out.endswith("<i>after</i></div>")
    uris = re.findall(r'src="([^"]+)"', out)
    assert [decoded(u).replace(' xmlns="http://www.w3.org/2000/svg"', "", 1) if "width='1'"
            in decoded(u) else decoded(u) for u in uris] == [a, b]
    assert re.findall(r'alt="([^"]*)"', out) == ["first &amp; one", "second"]
    assert alt_of(a) == "first & one" and alt_of(b) == "second" and alt_of("<svg/>") == ""


def test_binder_trusts_the_lessons_of_every_edition():
    """postBuild's globs, expanded by bash in the repository, name every lesson."""
    post = (ROOT / "binder" / "postBuild").read_text()
    line = next(x for x in post.splitlines() if x.startswith("jupyter trust"))
    globs = line.split()[2:]
    expanded = subprocess.run(["bash", "-O", "nullglob", "-c", "echo " + " ".join(globs)],
                              cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    lessons = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "lessons").rglob("*.ipynb")
                     if ".ipynb_checkpoints" not in p.parts)
    assert sorted(expanded) == lessons
    assert any(p.startswith("lessons/zh/") for p in expanded)
    assert any(p.startswith("lessons/ru/") for p in expanded)
