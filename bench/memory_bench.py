"""Long-term memory: extraction from scripted conversations, recall quality, isolation, recall latency.

Run: .venv/bin/python -m bench.memory_bench [--users 32] [--load-users 4] [--turns 30] [--out result.json] [--smoke]
     (throw-away data dir, SQLite + Milvus Lite; REDIS_URL=… uses Redis for the cache-aside hash).

1. Every user states preferences and facts in chat messages (Chinese or English); half of them
   later contradict some (moved city, changed answer preference, renamed pet). Each message goes
   through understanding and the offline post-`done` extraction (explicit statements only).
   Reported: scripted memories stored exactly as the current set (superseded ones invalidated).
2. Every user then asks questions that need one memory. Recall = the current memory is among
   the recalled ones; precision = share of similarity-recalled memories (standing ones — profile,
   instructions, answer style — come with every turn by design and are counted apart) that are the
   question's memory. Before asking, the vector of every superseded memory is written back into
   the index (a physical delete that failed): stale memories recalled must still be 0. Cross-user
   memories recalled must be 0.
3. Latency at 200 memories per user: recall alone (query embedding included), recall when the
   turn has already embedded the question (what recall adds to a turn), the query embedding alone
   (baseline, same run), and whole offline chat turns with memory on vs off, interleaved.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import threading
import time
from dataclasses import replace

from bench.common import arguments, bench_user, p50_p95, setup_django, write_json

ZH = {"cities": ["上海", "北京", "杭州", "深圳", "成都", "广州", "南京", "武汉"],
      "jobs": ["后端工程师", "产品经理", "数据分析师", "运维工程师", "小学老师", "护士"],
      "pets": ["小白", "豆豆", "旺财", "咪咪", "团子", "可乐"], "allergens": ["花生", "海鲜", "芒果", "牛奶"],
      "sports": ["游泳", "打羽毛球", "跑步", "骑自行车"]}
EN = {"cities": ["London", "Berlin", "Toronto", "Sydney", "Dublin", "Oslo"],
      "jobs": ["data engineer", "nurse", "teacher", "designer", "lawyer"],
      "pets": ["Biscuit", "Luna", "Max", "Pepper"], "allergens": ["peanuts", "shellfish", "gluten", "dairy"],
      "sports": ["swimming", "tennis", "running", "cycling"]}


def persona(i: int, rng: random.Random) -> dict:
    zh = i % 4 != 3  # a quarter of the users speak English
    pool = ZH if zh else EN
    p = {"zh": zh, **{k[:-1] if k != "cities" else "city": rng.choice(v) for k, v in pool.items()}}
    p["city2"] = rng.choice([c for c in pool["cities"] if c != p["city"]])
    p["pet2"] = rng.choice([c for c in pool["pets"] if c != p["pet"]])
    p["short"] = rng.random() < 0.5
    p["contradicts"] = i % 2 == 0
    return p


def script(p: dict) -> tuple[list[str], dict[str, str]]:
    """Messages the user sends, and the memory each question topic needs (after contradictions)."""
    if p["zh"]:
        brevity = ("简洁" if p["short"] else "详细", "详细" if p["short"] else "简洁")
        said = [f"记住我在{p['city']}工作", f"我是一名{p['job']}，年假怎么算？", f"记住我对{p['allergen']}过敏",
                f"记住我的猫叫{p['pet']}", f"我更喜欢{brevity[0]}的回答", f"记住我每周都去{p['sport']}"]
        current = {"city": f"我在{p['city']}工作", "allergy": f"我对{p['allergen']}过敏", "pet": f"我的猫叫{p['pet']}",
                   "style": f"我更喜欢{brevity[0]}的回答", "sport": f"我每周都去{p['sport']}"}
        if p["contradicts"]:
            said += [f"记住我现在在{p['city2']}工作", f"我更喜欢{brevity[1]}的回答", f"记住我的猫叫{p['pet2']}"]
            current.update(city=f"我现在在{p['city2']}工作", style=f"我更喜欢{brevity[1]}的回答",
                           pet=f"我的猫叫{p['pet2']}")
    else:
        brevity = ("short" if p["short"] else "detailed", "detailed" if p["short"] else "short")
        said = [f"Remember that I work in {p['city']}", f"I am a {p['job']}. How is annual leave counted?",
                f"Remember that I am allergic to {p['allergen']}", f"Remember that my cat is called {p['pet']}",
                f"I prefer {brevity[0]} answers", f"Remember that I go {p['sport']} every week"]
        current = {"city": f"I work in {p['city']}", "allergy": f"I am allergic to {p['allergen']}",
                   "pet": f"my cat is called {p['pet']}", "style": f"I prefer {brevity[0]} answers",
                   "sport": f"I go {p['sport']} every week"}
        if p["contradicts"]:
            said += [f"Remember that I now work in {p['city2']}", f"I prefer {brevity[1]} answers",
                     f"Remember that my cat is called {p['pet2']}"]
            current.update(city=f"I now work in {p['city2']}", style=f"I prefer {brevity[1]} answers",
                           pet=f"my cat is called {p['pet2']}")
    return said, current


QUESTIONS = {
    True: {"allergy": "我能吃{allergen}做的点心吗？", "pet": "我家猫咪叫什么名字？", "city": "我工作的城市冬天冷不冷？",
           "sport": "我平时做什么运动？", "style": "你觉得我喜欢什么样的回答？"},
    False: {"allergy": "Can I eat a snack made with {allergen}?", "pet": "What is my cat's name?",
            "city": "Is the city where I work cold in winter?", "sport": "What sport do I do?",
            "style": "What kind of answers do I like?"},
}


def say(user, text: str) -> None:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.understanding import QueryUnderstanding
    from config_admin.conf import ai_config
    from memory.compose import memory_params
    from memory.scope import memory_scope_reply
    from memory.turn import extract_and_save

    c = QueryUnderstanding(None, "").run(message=text)
    params = memory_params(ai_config.snapshot())
    if c.scope.value == "MEMORY":  # "记住……" is answered by the MEMORY scope, which saves at once
        memory_scope_reply(user_id=user.pk, message=text, hints=c.memory_write_hints, params=params)
    else:  # any other turn: the post-`done` extraction
        extract_and_save(user_id=user.pk, message=text, hints=c.memory_write_hints, params=params, chat_model=None)


def quality(users: int) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from config_admin.conf import ai_config
    from memory.backends import get_memory_index
    from memory.compose import memory_params
    from memory.models import UserMemory
    from memory.recall import is_standing
    from memory.turn import build_recaller, recall_for_turn

    rng = random.Random(7)
    people = []
    for i in range(users):
        user = bench_user(f"u{i}", role=None, password="x")
        p = persona(i, rng)
        said, current = script(p)
        for text in said:
            say(user, text)
        people.append((user, p, current))
    exact = 0
    misses: list[str] = []
    for user, _p, current in people:
        active = set(UserMemory.objects.filter(user=user, invalidated_at__isnull=True)
                     .values_list("content", flat=True))
        wanted = set(current.values()) | ({f"我是一名{_p['job']}"} if _p["zh"] else {f"I am a {_p['job']}"})
        exact += active == wanted
        if active != wanted:
            misses.append(f"  {user.username}: missing {sorted(wanted - active)}, unexpected {sorted(active - wanted)}")
    result: dict = {"extraction": {
        "users_exact": exact, "users": len(people), "rows": UserMemory.objects.count(),
        "invalidated": UserMemory.objects.filter(invalidated_at__isnull=False).count(), "misses": misses[:6]}}
    # Simulate failed physical deletes: every superseded memory's vector goes back into the index.
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from docmind.backends import get_embedder

    index, embedder = get_memory_index(), get_embedder()
    stale_rows = list(UserMemory.objects.filter(invalidated_at__isnull=False))
    for row in stale_rows:
        index.upsert(memory_id=row.pk, user_id=row.user_id, memory_type=row.memory_type, text=row.content,
                     vector=embedder.embed_passages([row.content])[0])
    owner = dict(UserMemory.objects.values_list("id", "user_id"))
    invalid = set(UserMemory.objects.filter(invalidated_at__isnull=False).values_list("id", flat=True))
    params = memory_params(ai_config.snapshot())
    wide = build_recaller(replace(params, recall_min_score=-1.0, recall_margin=9.0, recall_top_k=50))
    hits = asked = relevant = relevant_right = stale = cross = standing = 0
    sweep: list[tuple[bool, list[tuple[float, bool]]]] = []
    missed: dict[str, int] = {}  # (needed memory is standing, scored hits)
    for user, p, current in people:
        for topic, template in QUESTIONS[p["zh"]].items():
            question = template.format(**p)
            recalled = recall_for_turn(user_id=user.pk, query=question, params=params).recall.memories
            asked += 1
            texts = {m.item.content for m in recalled}
            hits += current[topic] in texts
            if current[topic] not in texts:
                key = f"{'zh' if p['zh'] else 'en'}/{topic}"
                missed[key] = missed.get(key, 0) + 1
            unfiltered = wide.run(user_id=user.pk, query=question).memories  # for the sweep below
            sweep.append([(m.score, m.item.content == current[topic], is_standing(m.item)) for m in unfiltered])
            for m in recalled:
                stale += m.item.id in invalid
                cross += owner.get(m.item.id) != user.pk or m.item.user_id != user.pk
                if m.score is None:
                    standing += 1
                else:
                    relevant += 1
                    relevant_right += m.item.content == current[topic]
    result["recall"] = {"hits": hits, "asked": asked, "share": round(hits / asked, 3), "missed_by_topic": missed}
    result["precision"] = {"right": relevant_right, "recalled_by_similarity": relevant,
                           "share": round(relevant_right / max(1, relevant), 3),
                           "standing_per_question": round(standing / asked, 2)}
    result["sweep"] = {"setting": {"min_score": params.recall_min_score, "margin": params.recall_margin}, "if": []}
    for cut, margin in ((0.2, 9.0), (0.3, 9.0), (0.4, 9.0), (0.5, 9.0), (0.2, 0.05), (0.2, 0.1), (0.2, 0.2)):
        got = shown = good = 0
        for entries in sweep:
            best = max((sc for sc, _, _ in entries if sc is not None), default=0.0)
            passes = [sc is not None and sc >= cut and sc >= best - margin for sc, _, _ in entries]
            scored = [ok for (sc, ok, _), p in zip(entries, passes, strict=True) if p][:params.recall_top_k]
            kept_standing = [ok for (sc, ok, st), p in zip(entries, passes, strict=True) if st and not p]
            got += any(scored) or any(kept_standing)
            shown += len(scored)
            good += sum(scored)
        result["sweep"]["if"].append({"min_score": cut, "margin": margin if margin < 9 else None,
                                      "recall": round(got / asked, 3), "precision": round(good / max(1, shown), 3)})
    result["stale_recalled"] = {"count": stale, "stale_vectors_in_index": len(stale_rows)}
    result["cross_user_recalled"] = cross
    return result


def load_users(count: int, per_user: int) -> list:
    """Users with `per_user` active memories each, written straight into the database and the index."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.utils import timezone

    from docmind.backends import get_embedder
    from memory.backends import get_memory_index
    from memory.models import UserMemory

    topics = ["我读过《{}》这本书", "我去过{}旅行", "我收藏了{}的唱片", "我的同事{}是我的导师", "我在学习{}",
              "I once visited {}", "I collect {} stamps", "my favourite dish is {}"]
    words = ["红楼梦", "京都", "爵士乐", "老王", "吉他", "Lisbon", "Norway", "paella", "三体", "冰岛", "巴赫",
             "小李", "法语", "Kyoto", "Japan", "ramen", "围城", "新疆", "摇滚", "阿强", "摄影", "Porto", "Peru"]
    embedder, index = get_embedder(), get_memory_index()
    users = []
    for u in range(count):
        user = bench_user(f"load{u}", role=None, password="x")
        texts = [topics[i % len(topics)].format(f"{words[(i * 7 + u) % len(words)]}{i}") for i in range(per_user)]
        rows = UserMemory.objects.bulk_create([UserMemory(user=user, memory_type="fact", content=t,
                                                          created_at=timezone.now()) for t in texts])
        vectors = embedder.embed_passages(texts)
        for row, vector in zip(rows, vectors, strict=True):
            index.upsert(memory_id=row.pk, user_id=user.pk, memory_type="fact", text=row.content, vector=vector)
        users.append(user)
    return users


def latency(users: list, turns: int) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.pipeline import ChatPipeline
    from config_admin.conf import ai_config
    from config_admin.models import SysAiConfig
    from docmind.backends import get_embedder
    from memory.compose import memory_params
    from memory.turn import recall_for_turn
    from tests.chat.chat_helpers import ingest_tiny_kb

    params = memory_params(ai_config.snapshot())
    inner = get_embedder().inner
    cold, warm, embed_only = [], [], []
    for i in range(turns):
        for user in users:
            question = f"第{i}个问题：我读过的书里哪本最有名？{user.pk}"
            started = time.perf_counter()
            inner.embed_query(question + "基线")
            embed_only.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            recall_for_turn(user_id=user.pk, query=question, params=params)
            cold.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()  # the turn embedded this question already (answer cache, retrieval)
            recall_for_turn(user_id=user.pk, query=question, params=params)
            warm.append((time.perf_counter() - started) * 1000)
    result = {"recalls": len(cold), "query_embedding_alone_ms": p50_p95(embed_only),
              "recall_with_query_embedding_ms": p50_p95(cold), "recall_question_already_embedded_ms": p50_p95(warm)}
    ingest_tiny_kb()
    SysAiConfig.objects.filter(key="cache.semantic.enabled").update(value="false")
    times: dict[bool, list[float]] = {True: [], False: []}
    stage: list[float] = []  # the turn's own "memory" timing: recall inside the turn
    for i in range(turns):
        for enabled in (True, False) if i % 2 else (False, True):
            SysAiConfig.objects.filter(key="memory.enabled").update(value="true" if enabled else "false")
            started = time.perf_counter()
            # A question of its own per turn: the process caches query embeddings, and a repeat would be cheaper.
            message = f"星河公司的年假有多少天？第{i}次{'甲' if enabled else '乙'}"
            events = list(ChatPipeline().run(user=users[i % len(users)], message=message, cancel=threading.Event()))
            times[enabled].append((time.perf_counter() - started) * 1000)
            assert events[-1].type == "done", events[-1]
            if enabled:
                stage.append(float(events[-1].data["timings_ms"]["memory"]))
    on, off = statistics.median(times[True]), statistics.median(times[False])
    result["whole_turn"] = {"turns_each": turns, "memory_on_p50_ms": round(on, 1), "memory_off_p50_ms": round(off, 1),
                            "added_ms": round(on - off, 1), "memory_stage_ms": p50_p95(stage)}
    return result


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--load-users", type=int, default=4)
    parser.add_argument("--memories", type=int, default=200, help="memories per user in the latency part")
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args(argv)
    if args.smoke:
        args.users, args.load_users, args.memories, args.turns = 2, 1, 5, 1
    setup_django(unset=["DATABASE_URL"])  # SQLite: the figures are the memory store's, not a database server's
    cache = "Redis" if os.environ.get("REDIS_URL") else "in-process"
    if os.environ.get("REDIS_URL") and not args.smoke:  # a fresh database reuses user ids: drop earlier runs' hashes
        # apps not ready: the project loads only after setup_django() has set up this run's Django
        from memory.backends import get_memory_cache

        client = get_memory_cache()._client
        for key in client.scan_iter(get_memory_cache().key(0).rsplit(":", 1)[0] + ":*"):
            client.delete(key)
    result = {"users": args.users, "load_users": args.load_users, "memories_per_user": args.memories,
              "cache": cache, "quality": quality(args.users),
              "latency": latency(load_users(args.load_users, args.memories), args.turns)}
    write_json(result, args.out)


if __name__ == "__main__":
    main()
