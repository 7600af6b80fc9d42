"""Bytes → str for plain text: BOMs, UTF-8, GB18030/GBK, Big5; a few bad bytes replaced, garbage refused."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from kb.ingestion import reasons
from kb.ingestion.parsers.base import ParseError

_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
# Tried after strict UTF-8; GB18030 is a superset of GBK and GB2312.
_ENCODINGS = ("utf-8", "gb18030", "big5")
# Judging plausibility on the first characters is enough: a wrong decode is wrong throughout.
_SAMPLE_CHARS = 100_000
# A reading is implausible when more than this share of its characters are ones no real text is
# made of (private use, unassigned, control characters, rare CJK extensions)… Replacement marks are
# not counted: _read already bounds how many bytes may be replaced.
_MAX_UNLIKELY_SHARE = 0.02
# …or when its Chinese characters are mostly rare ones. Simplified Chinese measured 0.88 common,
# traditional 0.44; UTF-8 read as GB18030 0.04, Big5 read as GB18030 0.19, ASCII read as UTF-16 0.05.
_MIN_COMMON_HANZI_SHARE = 0.25
_MIN_HANZI_TO_JUDGE = 10
_DAMAGED = re.compile("\ufffd+")


_COMMON_HANZI = set("的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天分还进好小部其些主样理心她本前开但因只从想实日军者意无力它与长把机十民第公此已工使情明性知全三又关点正业外将两高间由问很最重并物手应战向头文体政美相见被利什二等产或新己制身果加西斯月话合回特代内信表化老给世位次度门任常先海通教儿原东声提立及比员解水名真论处走义各入几口认条平系气题活尔更别打女变四神总何电数安少报才结反受目太量再感建务做接必场件计管期市直德资命山金指克许统区保至队形社便空决治展马科司五基眼书非则听白却界达光放强即像难且权思王象完设式色路记南品住告类求据程北边死张该交规万取拉格望觉术领共确传师观清今切院让识候带导争运笑飞风步改收根干造言联持组每济车亲极林服快办议往元英士证近失转夫令准布始怎呢存未远叫台单影具罗字爱击流备兵连调深商算质团集百需价花党华城石级整府离况亚请技际约示复病息究线似官火断精满支视消越器容照须九增研写称企八功吗包片史委乎查轻易早曾除农找装广显吧阿李标谈吃图念六引历首医局突专费号尽另周较注语仅考落青随选列武红响虽推势参希古众构房半节土投某案黑维革划敌致陈律足态护七兴派孩验责营星够章音跟志底站严巴例防族供效续施留讲型料终答紧黄绝奇察母京段依批群项故按河米围江织害斗双境客纪采举杀攻父苏密低朝友诉止细愿千值仍男钱破网热助倒育属坐帝限船脸职速刻乐否刚威毛状率甚独球般普怕弹校苦创假久错承印晚兰试股拿脑预谁益阳若哪微尼继送急血惊伤素药适波夜省初喜卫源食险待述陆习置居劳财环排福纳欢雷警获模充负云停木游龙树疑层冷洲冲射略范竟句室异激汉村哈策演简卡罪判担州静退既衣您宗积余痛检差富灵协角占配征修皮挥胜降阶审沉坚善妈刘读啊超免压银买皇养伊怀执副乱抗犯追帮宣佛岁航优怪香著田铁控税左右份穿艺背阵草脚概恶块顿敢守酒岛托央户烈洋哥索胡款靠评版宝座释景顾弟登货互付伯慢欧换闻危忙核暗姐介坏讨丽良序升监临亮露永呼味野架域沙掉括舰鱼杂误湾吉减编楚肯测败屋跑梦散温困剑渐封救贵枪缺楼县尚毫移娘朋画班智亦耳恩短掌恐遗固席松秘谢鲁遇康虑幸均销钟诗藏赶剧票损忽巨炮旧端探湖录叶春乡附吸予礼港雨呀板庭妇归睛饭额含顺输摇招婚脱补谓督毒油疗旅泽材灭逐莫笔亡鲜词圣择寻厂睡博勒烟授诺伦岸奥唐卖俄炸载洛健堂旁宫喝借君禁阴园谋宋避抓荣姑孙逃牙束跳顶玉镇雪午练迫爷篇肉嘴馆遍凡础洞卷坦牛宁纸诸训私庄祖丝翻暴森塔默握戏隐熟骨访弱蒙歌店鬼软典欲萨伙遭盘爸扩盖弄雄稳忘亿刺拥徒姆杨齐赛趣曲刀床迎冰虚玩析窗醒妻透购替塞努休虎扬途侵刑绿兄迅套贸毕唯谷轮库迹尤竞街促延震弃甲伟麻川申缓潜闪售灯针哲络抵朱埃抱鼓植纯夏忍页杰筑折郑贝尊吴秀混臣雅振染盛怒舞圆搞狂措姓残秋培迷诚宽宇猛摆梅毁伸摩盟末乃悲拍丁赵摸跃迷误败欠")  # noqa: E501 (one data line)

@dataclass(frozen=True)
class _Reading:
    encoding: str
    text: str
    errors: int
    score: float


def decode_text(data: bytes) -> str:
    """The most plausible reading of `data`; a few undecodable bytes become U+FFFD, garbage is refused.

    A byte-order mark is trusted only when the text behind it reads plausibly in its encoding:
    a stray ``\\xff\\xfe`` in front of UTF-8 or GBK text is dropped instead of turning the file
    into CJK-looking noise.
    """
    body = data
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom):]
            reading = _read(body, encoding)
            if reading is not None and _plausible(reading.text):
                return reading.text
            break
    if _looks_binary(body):
        raise ParseError(reasons.LOOKS_BINARY)
    try:
        return body.decode("utf-8")  # strict UTF-8 success on non-UTF-8 bytes is vanishingly rare
    except UnicodeDecodeError:
        pass
    readings = [r for r in (_read(body, encoding) for encoding in _ENCODINGS) if r is not None]
    if readings:
        best = max(readings, key=lambda r: (r.score, -r.errors))
        if _plausible(best.text):
            return best.text
        raise ParseError(reasons.IMPLAUSIBLE_ENCODING)
    return _detected(body)


def _read(data: bytes, encoding: str) -> _Reading | None:
    """Decode with replacement; None when more than a few places (0.1 % of bytes, at least 2) do not decode."""
    text = data.decode(encoding, errors="replace")
    # One damaged byte inside a multi-byte character yields a run of marks: count places, not marks.
    errors = len(_DAMAGED.findall(text))
    if errors > max(2, len(data) // 1000):
        return None
    return _Reading(encoding, text, errors, _score(text))


def _detected(data: bytes) -> str:
    # Western single-byte encodings (cp1252, Latin-1…): charset-normalizer rejects messy readings itself.
    # heavy: charset-normalizer (about 10 ms) loads only for text that is not UTF-8, not as a parser child starts
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None or not _plausible(str(best)):
        raise ParseError(reasons.UNKNOWN_ENCODING)
    return str(best)


def _counts(text: str) -> tuple[int, int, int, int]:
    """(characters, unlikely characters, CJK ideographs, common ideographs) over a sample, whitespace excluded."""
    counted = unlikely = hanzi = common = 0
    for ch in text[:_SAMPLE_CHARS]:
        code = ord(ch)
        if code < 0x80:
            if ch.isspace():
                continue
            counted += 1
            unlikely += code < 0x20 or code == 0x7F
            continue
        if ch.isspace():
            continue
        counted += 1
        if 0x4E00 <= code <= 0x9FFF:
            hanzi += 1
            common += ch in _COMMON_HANZI
        elif 0x3400 <= code <= 0x4DBF or code >= 0x20000 or unicodedata.category(ch) in _UNLIKELY:
            unlikely += 1
    return counted, unlikely, hanzi, common


_UNLIKELY = frozenset({"Co", "Cn", "Cs", "Cc"})


def _score(text: str) -> float:
    counted, unlikely, hanzi, common = _counts(text)
    if not counted:
        return 0.0
    # Even a few ideographs tell readings apart (real ones are mostly common, mojibake mostly rare);
    # only refusing a file needs enough of them to judge (_plausible).
    clean = 1 - unlikely / counted
    return clean * (common / hanzi if hanzi else 1.0)


def _plausible(text: str) -> bool:
    counted, unlikely, hanzi, common = _counts(text)
    if not counted:
        return True  # only whitespace: the caller reports "no text"
    if unlikely / counted > _MAX_UNLIKELY_SHARE:
        return False
    return hanzi < _MIN_HANZI_TO_JUDGE or common / hanzi >= _MIN_COMMON_HANZI_SHARE


def _looks_binary(data: bytes) -> bool:
    sample = data[:8192]
    if b"\x00" in sample:
        return True
    control = sum(1 for byte in sample if byte < 32 and byte not in (9, 10, 12, 13, 27))
    return control / max(len(sample), 1) > 0.05


def normalise_text(text: str) -> str:
    """Unify newlines, drop control characters and trailing spaces, collapse runs of blank lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")
    text = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", "", text)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()
