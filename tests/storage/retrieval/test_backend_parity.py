"""The scale-out backend ranks as the embedded one does: the same records (the paragraphs of this
repository's docs, and Chinese sentences written here), the same embedder, the same questions,
and hybrid search's hit@1 and MRR@10 within 0.01 of each other, top results agreeing.

Users move from SQLite to Postgres + Qdrant when they outgrow one machine; a different ranking
there would be a silent regression nobody measures.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from toolweave.storage.retrieval import (
    PostgresQdrantIndex,
    Record,
    SQLiteTextIndex,
    load_embedder,
)

DOCS = Path(__file__).resolve().parents[3] / "docs"

CHINESE = [
    "我每天早上七点起床，先喝一杯温水再去跑步。",
    "周末我们全家去西湖边散步，看到了很多荷花。",
    "这家餐厅的红烧肉做得特别好吃，价格也不贵。",
    "老师建议我们每天至少阅读半个小时的课外书。",
    "公司下个月要搬到新的办公楼，离地铁站更近。",
    "我的电脑最近运行很慢，可能需要清理一下硬盘。",
    "他从小就喜欢画画，现在是一名插画设计师。",
    "北京的秋天天气晴朗，是一年中最舒服的季节。",
    "医生说感冒的时候要多喝水，注意休息。",
    "这本小说讲述了一个普通家庭三代人的故事。",
    "我们计划明年春天去云南旅行，顺便看看洱海。",
    "数据库迁移完成以后，查询速度提高了一倍。",
    "孩子们在操场上踢足球，玩得非常开心。",
    "她在图书馆借了三本关于机器学习的书。",
    "明天下午三点在二楼会议室讨论季度预算。",
    "这款手机的电池可以连续使用两天。",
    "奶奶种的西红柿今年结了很多果子。",
    "我们团队用了两周时间修复了支付系统的漏洞。",
    "上海的地铁线路很多，换乘也比较方便。",
    "他每周三晚上去学校学习日语。",
    "新版本发布以后，用户反馈界面更加清楚了。",
    "冬天到了，记得给阳台上的花浇水。",
    "这次考试的题目比上次难了不少。",
    "我喜欢在安静的咖啡馆里写代码。",
    "长城是中国最有名的古代建筑之一。",
    "小王在年会上表演了一段相声，大家都笑了。",
    "服务器升级需要停机两个小时，请提前通知客户。",
    "妈妈做的饺子皮薄馅多，我一次能吃二十个。",
    "这条河以前污染很严重，现在已经变清了。",
    "他买了一辆电动自行车，每天骑车上班。",
    "我们的产品经理正在整理用户访谈的记录。",
    "熊猫主要吃竹子，每天要花很多时间进食。",
    "会议纪要已经发到大家的邮箱里了。",
    "学生们在实验室里观察植物细胞的结构。",
    "今年的年度报告显示公司的收入增长了百分之十五。",
    "我对花生过敏，所以吃东西之前要看配料表。",
    "下雨天路滑，开车的时候要减速慢行。",
    "这座城市每年夏天都会举办音乐节。",
    "客户要求我们在月底之前交付第一版设计稿。",
    "爷爷年轻的时候是一名火车司机。",
]


def paragraphs() -> list[str]:
    """The prose paragraphs of the docs (no code, no tables), at least twelve words each."""
    out = []
    for page in sorted(DOCS.glob("*.md")):
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for block in re.split(r"\n\s*\n", text):
            block = " ".join(block.split())
            if len(block.split()) >= 12 and not block.startswith(("|", "#")):
                out.append(block)
    return list(dict.fromkeys(out))


def questions(texts: list[str], count: int, seed: int) -> list[tuple[str, int]]:
    """(question, index of its record): a few words taken from the record, in order (English),
    or a stretch of characters from its middle (Chinese)."""
    rng = random.Random(seed)
    out = []
    for i in rng.sample(range(len(texts)), min(count, len(texts))):
        text = texts[i]
        words = re.findall(r"[A-Za-z][A-Za-z'-]{3,}", text)
        if len(words) >= 6:
            start = rng.randrange(len(words) - 4)
            out.append((" ".join(words[start : start + 4]), i))
        else:
            start = rng.randrange(max(len(text) - 8, 1))
            out.append((text[start : start + 7], i))
    return out


async def rankings(index: Any, asked: list[tuple[str, int]]) -> list[list[str]]:
    return [[h.record.id for h in await index.search(q, limit=10)] for q, _ in asked]


def metrics(ranked: list[list[str]], asked: list[tuple[str, int]]) -> tuple[float, float]:
    hit1 = sum(r[:1] == [str(i)] for r, (_, i) in zip(ranked, asked, strict=True))
    mrr = sum(
        1 / (r.index(str(i)) + 1) if str(i) in r else 0.0
        for r, (_, i) in zip(ranked, asked, strict=True)
    )
    return hit1 / len(asked), mrr / len(asked)


async def test_postgres_and_qdrant_rank_as_sqlite_does(postgres_dsn: str, tmp_path: Path) -> None:
    english = paragraphs()
    assert len(english) >= 200, "the docs hold fewer prose paragraphs than the test needs"
    texts = english + CHINESE
    records = [Record(str(i), text) for i, text in enumerate(texts)]
    asked = questions(english, 150, seed=1) + [
        (q, i + len(english)) for q, i in questions(CHINESE, 40, seed=2)
    ]
    embedder = load_embedder("wordllama")
    embedded = SQLiteTextIndex(tmp_path / "parity.db", embedder)
    scale = PostgresQdrantIndex(
        postgres_dsn, embedder, qdrant_path=str(tmp_path / "qdrant"), name="parity"
    )
    for index in (embedded, scale):
        for start in range(0, len(records), 200):
            await index.write(records[start : start + 200])
    ours, theirs = await rankings(embedded, asked), await rankings(scale, asked)
    await embedded.close()
    await scale.close()
    (hit_a, mrr_a), (hit_b, mrr_b) = metrics(ours, asked), metrics(theirs, asked)
    assert hit_a > 0.5 and mrr_a > 0.5  # the questions are answerable
    assert abs(hit_a - hit_b) <= 0.01 and abs(mrr_a - mrr_b) <= 0.01, (hit_a, hit_b, mrr_a, mrr_b)
    same_top = sum(a[:1] == b[:1] for a, b in zip(ours, theirs, strict=True)) / len(asked)
    assert same_top >= 0.97, same_top
