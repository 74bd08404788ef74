"""Structural check of the SARIF 2.1.0 documents `--format sarif` writes.

Written from the SARIF 2.1.0 specification (OASIS, sections 3.13-3.57) for
the objects and properties this project emits: required properties, types,
enumerations and minimums.  It replaces a vendored copy of the JSON schema;
no maintained PyPI package ships that schema (sarif-om, sarif-tools and
sarif-pydantic were checked)."""

from __future__ import annotations

LEVELS = {"none", "note", "warning", "error"}


def _text(message, where):
    assert isinstance(message, dict) and isinstance(message.get("text"), str), where


def _region(region, where):
    assert isinstance(region, dict), where
    for key in ("startLine", "startColumn", "endLine", "endColumn"):
        if key in region:
            assert isinstance(region[key], int) and region[key] >= 1, (where, key)
    assert "startLine" in region, where
    if "endLine" in region:
        assert region["endLine"] >= region["startLine"], where


def _physical_location(loc, where):
    assert isinstance(loc["artifactLocation"]["uri"], str) and loc["artifactLocation"]["uri"], where
    assert "\\" not in loc["artifactLocation"]["uri"], (where, "URIs use forward slashes")
    _region(loc["region"], where)


def check_sarif(doc: dict) -> None:
    """Assert that ``doc`` is a well-formed SARIF 2.1.0 log as this tool writes it."""
    assert doc["version"] == "2.1.0"
    assert isinstance(doc.get("$schema"), str) and doc["$schema"].startswith("https://")
    assert isinstance(doc["runs"], list) and len(doc["runs"]) == 1
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert isinstance(driver["name"], str) and driver["name"]
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)), "rule ids are unique"
    for r in rules:
        _text(r["shortDescription"], r["id"])
        _text(r["fullDescription"], r["id"])
        assert set(r["help"]) <= {"text", "markdown"} and isinstance(r["help"]["text"], str)
        assert r["defaultConfiguration"]["level"] in LEVELS
    assert isinstance(run["results"], list)
    for i, result in enumerate(run["results"]):
        where = f"results[{i}]"
        assert result["ruleId"] in ids, where
        assert isinstance(result["ruleIndex"], int) and ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in LEVELS, where
        _text(result["message"], where)
        assert len(result["locations"]) >= 1
        for loc in result["locations"]:
            _physical_location(loc["physicalLocation"], where)
        related_ids = [rel["id"] for rel in result.get("relatedLocations", [])]
        assert len(related_ids) == len(set(related_ids)) and all(j >= 0 for j in related_ids)
        for rel in result.get("relatedLocations", []):
            _physical_location(rel["physicalLocation"], where)
            _text(rel["message"], where)
        for fix in result.get("fixes", []):
            _text(fix["description"], where)
            assert len(fix["artifactChanges"]) >= 1
            for change in fix["artifactChanges"]:
                assert change["artifactLocation"]["uri"], where
                assert len(change["replacements"]) >= 1
                for rep in change["replacements"]:
                    _region(rep["deletedRegion"], where)
                    assert isinstance(rep["insertedContent"]["text"], str)
