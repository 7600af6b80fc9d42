"""LanguageMeans: where an embedder puts Chinese and English text, as the mean vector of each language.

A multilingual embedder maps a sentence and its translation close together, but not onto each other: every
Chinese text sits to one side of every English text, by about the same vector. Next to that the difference between
topics is small, so a Chinese question ranks almost every Chinese passage above the English one that answers it
(and the reverse), and the answer never reaches the vector search's candidates. The question's vector less its
language's mean keeps what it asks and drops the part that says which language it asks in: among the other
language's passages it ranks by meaning. (Language-mean centring: Libovický et al., "On the Language Neutrality
of Pre-trained Multilingual Representations", 2020.) Moving the question to the other language's mean instead
also favours that language's most generic passages, the ones nearest its mean.

The means are a property of the embedder, measured on the everyday sentence pairs below (written for this, about
no subject the product deals with), not on any knowledge base.
"""
from __future__ import annotations

import logging
import threading

import numpy as np

log = logging.getLogger(__name__)

# The retrieval stage of the passages found by a centred question vector alone (kb.retrieval.hybrid); the local
# reranker does not read their cosine as agreement in words (docmind.rerank).
CENTRED_VECTOR_STAGE = "vector_translated"

PARALLEL_SENTENCES: tuple[tuple[str, str], ...] = (
    ("今天天气很好，我们去公园散步吧。", "The weather is nice today, let's take a walk in the park."),
    ("请在周五之前提交报告。", "Please submit the report before Friday."),
    ("这家餐厅的菜很好吃，但是价格有点贵。", "The food at this restaurant is delicious, but a bit expensive."),
    ("火车晚点了两个小时。", "The train was two hours late."),
    ("他每天早上七点起床。", "He gets up at seven every morning."),
    ("图书馆周日不开放。", "The library is closed on Sundays."),
    ("我的手机没电了，可以借用一下充电器吗？", "My phone is out of battery, can I borrow a charger?"),
    ("孩子们在学校学习数学和音乐。", "The children study maths and music at school."),
    ("这座城市的人口超过一千万。", "The city has a population of more than ten million."),
    ("医生建议他多喝水，多休息。", "The doctor advised him to drink more water and rest."),
    ("会议室可以容纳二十人。", "The meeting room holds twenty people."),
    ("请把文件保存在共享文件夹里。", "Please save the file in the shared folder."),
    ("这本书讲述了一个农民的一生。", "This book tells the life of a farmer."),
    ("银行的营业时间是上午九点到下午五点。", "The bank is open from 9 am to 5 pm."),
    ("下雨时请关好窗户。", "Please close the windows when it rains."),
    ("新产品将在明年春天上市。", "The new product will be launched next spring."),
    ("她用信用卡支付了机票。", "She paid for the plane ticket with a credit card."),
    ("这台电脑的内存不够用了。", "This computer does not have enough memory."),
    ("我们需要更多的志愿者来帮忙。", "We need more volunteers to help."),
    ("河边有一家小咖啡馆。", "There is a small cafe by the river."),
    ("考试成绩将在下周公布。", "The exam results will be announced next week."),
    ("他忘记了自己的密码。", "He forgot his password."),
    ("公交车每十分钟一班。", "The bus comes every ten minutes."),
    ("这个项目的预算是五万元。", "The budget for this project is fifty thousand yuan."),
    ("冬天这里经常下雪。", "It often snows here in winter."),
    ("请不要在室内吸烟。", "Please do not smoke indoors."),
    ("我们的航班在晚上八点起飞。", "Our flight takes off at eight in the evening."),
    ("这个软件每个月更新一次。", "This software is updated once a month."),
    ("他在一家银行工作了十年。", "He has worked at a bank for ten years."),
    ("快递明天上午送到。", "The parcel will arrive tomorrow morning."),
    ("孩子发烧了，需要去医院。", "The child has a fever and needs to go to the hospital."),
    ("请关掉不用的灯，节约用电。", "Please turn off unused lights to save electricity."),
    ("博物馆的门票是每人三十元。", "Museum tickets cost thirty yuan per person."),
    ("这条路正在维修，请绕行。", "This road is under repair, please take a detour."),
    ("猫喜欢在阳光下睡觉。", "Cats like to sleep in the sun."),
    ("比赛因为大雨推迟到明天。", "The match was postponed to tomorrow because of heavy rain."),
    ("我妹妹在大学学习化学。", "My sister studies chemistry at university."),
    ("超市里的水果今天打八折。", "Fruit in the supermarket is twenty percent off today."),
    ("飞机上禁止使用打火机。", "Lighters are not allowed on the plane."),
    ("这首歌是一位年轻歌手写的。", "This song was written by a young singer."),
    ("每年秋天，这里的树叶都会变红。", "Every autumn the leaves here turn red."),
    ("如果你迷路了，可以问警察。", "If you get lost, you can ask a police officer."),
    ("他把自行车停在了门口。", "He parked his bicycle at the door."),
    ("这间公寓有两个卧室和一个阳台。", "This flat has two bedrooms and a balcony."),
    ("晚饭后我们一起看了一部电影。", "After dinner we watched a film together."),
    ("请用黑色墨水笔填写表格。", "Please fill in the form with a black ink pen."),
    ("这座桥建于一百多年前。", "This bridge was built more than a hundred years ago."),
    ("周末的时候他常常去钓鱼。", "He often goes fishing at the weekend."),
)


# Measured means by embedder name: they belong to the model, so backends rebuilt for a configuration change (or a
# test's settings) reuse them instead of embedding the sentences again.
_means_by_embedder: dict[str, tuple[np.ndarray, np.ndarray]] = {}


class LanguageMeans:
    """The mean embedding of the Chinese sentences and of their English translations, for one embedder, measured
    once per embedder name on first use (PARALLEL_SENTENCES: one batch of passages); none when the embedder
    fails (asked again by the next LanguageMeans, not by this one)."""

    def __init__(self, embedder) -> None:
        self._embedder = embedder
        self._lock = threading.Lock()
        self._means: tuple[np.ndarray, np.ndarray] | None = None
        self._measured = False

    def means(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(Chinese mean, English mean), or None."""
        if not self._measured:
            with self._lock:
                if not self._measured:
                    self._means = self._measure()
                    self._measured = True
        return self._means

    def centred(self, vector: np.ndarray, *, chinese: bool) -> np.ndarray | None:
        """The question's vector less its language's mean (Chinese when `chinese`), unit length; None without
        the means or when the vector's size is not the embedder's."""
        means = self.means()
        if means is None or np.shape(vector) != np.shape(means[0]):
            return None
        centred = np.asarray(vector, dtype=np.float32) - means[0 if chinese else 1]
        norm = float(np.linalg.norm(centred))
        return centred / norm if norm and np.isfinite(norm) else None

    def _measure(self) -> tuple[np.ndarray, np.ndarray] | None:
        name = getattr(self._embedder, "name", None)
        if isinstance(name, str) and name in _means_by_embedder:
            return _means_by_embedder[name]
        try:
            vectors = np.asarray(self._embedder.embed_passages([text for pair in PARALLEL_SENTENCES for text in pair]),
                                 dtype=np.float32)
        except Exception:  # the vector search of the question's own language still stands
            log.exception("the embedder's language means could not be measured; no cross-language vector search")
            return None
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        means = vectors[0::2].mean(axis=0), vectors[1::2].mean(axis=0)
        if isinstance(name, str):
            _means_by_embedder[name] = means
        return means
