"""The knowledge graph (plain dicts since networkx left): edges keyed by memory, nodes and
names dropped with their last edge, the capped walk in insertion order, traversal by depth."""

from __future__ import annotations

from toolweave.memory.graph import GRAPH_NEIGHBOR_SCORE, KnowledgeGraph
from toolweave.memory.types import Relation


def rel(subject: str, predicate: str, obj: str) -> Relation:
    return Relation(subject, predicate, obj)


def test_edges_nodes_and_names_follow_the_memories_that_hold_them() -> None:
    graph = KnowledgeGraph()
    graph.add("m1", [rel("Alice", "lives_in", "Paris"), rel("Alice", "likes", "green tea")])
    graph.add("m2", [rel("张三", "住在", "北京"), rel("Alice", "knows", "张三")])
    assert len(graph) == 5
    assert graph.entities_in("does alice like Green Tea in paris?") == [
        "green tea",
        "Alice",
        "Paris",
    ]
    assert graph.entities_in("张三住在哪里") == ["张三"]

    graph.add("m1", [rel("Alice", "lives_in", "Berlin")])  # a memory's edges are replaced
    assert graph.entities_in("paris green tea") == []
    assert [r.object for r in graph.related("alice")] == ["张三", "Berlin"]

    graph.remove("m2")
    assert len(graph) == 2
    assert graph.entities_in("张三") == []
    graph.remove("m1")
    graph.remove("m1")  # twice: nothing left to remove
    assert len(graph) == 0 and graph.related("Alice") == []


def test_related_reaches_as_far_as_depth_in_either_direction() -> None:
    graph = KnowledgeGraph()
    graph.add("a", [rel("Alice", "works_at", "ACME")])
    graph.add("b", [rel("Bob", "works_at", "ACME")])
    graph.add("c", [rel("Bob", "lives_in", "Oslo")])
    assert graph.related("acme") == [
        Relation("Alice", "works_at", "ACME", "a"),
        Relation("Bob", "works_at", "ACME", "b"),
    ]
    assert [r.memory_id for r in graph.related("Alice")] == ["a"]
    assert [r.memory_id for r in graph.related("Alice", depth=2)] == ["a", "b"]
    assert [r.memory_id for r in graph.related("Alice", depth=3)] == ["a", "c", "b"]  # sorted
    # Past the last node reached the walk stops: before, it counted every level up to `depth`.
    assert graph.related("Alice", depth=10**12) == graph.related("Alice", depth=3)


def test_memory_scores_walk_direct_edges_then_neighbours_up_to_the_cap() -> None:
    graph = KnowledgeGraph()
    graph.add("m3", [rel("Alice", "likes", "tea")])
    graph.add("m1", [rel("Bob", "knows", "Alice")])
    graph.add("m2", [rel("Alice", "lives_in", "Paris"), rel("Paris", "is_a", "city")])
    graph.add("m4", [rel("tea", "is_a", "drink")])
    neighbour = GRAPH_NEIGHBOR_SCORE
    # Alice's outgoing edges in insertion order, then her incoming one; then her neighbours
    # (Bob, Paris, tea: sorted) with theirs.
    assert list(graph.memory_scores(["Alice"], 10).items()) == [
        ("m3", 1.0),
        ("m2", 1.0),
        ("m1", 1.0),
        ("m4", neighbour),
    ]
    assert list(graph.memory_scores(["Alice"], 2)) == ["m3", "m2"]
    assert graph.memory_scores([], 10) == {}


def test_conflicts_name_the_memories_an_exclusive_fact_replaces() -> None:
    graph = KnowledgeGraph()
    graph.add("old", [rel("Alice", "lives_in", "Paris"), rel("Alice", "likes", "tea")])
    graph.add("same", [rel("Alice", "lives_in", "Berlin")])
    exclusive = frozenset({"lives_in"})
    assert graph.conflicts([rel("Alice", "lives_in", "Berlin")], exclusive) == {"old"}
    assert graph.conflicts([rel("Alice", "likes", "coffee")], exclusive) == set()
    assert graph.conflicts([rel("Nobody", "lives_in", "Rome")], exclusive) == set()
