"""File bytes → plain text for .txt/.md/.html/.pdf/.docx, with encoding detection and clear refusals."""
from __future__ import annotations

import io
import re
from html.parser import HTMLParser

SUPPORTED_TYPES = ("txt", "md", "html", "htm", "pdf", "docx")


class ParseError(ValueError):
    """The file cannot become text; the message is shown to the user as the failure reason."""


def file_type_of(name: str) -> str:
    """Lower-case extension without the dot ('' when there is none)."""
    _, dot, ext = name.rpartition(".")
    return ext.lower() if dot else ""


def parse_document(data: bytes, file_type: str) -> str:
    """The document's text with headings as Markdown '#' lines; raises ParseError with the reason."""
    kind = file_type.lower().lstrip(".")
    if kind not in SUPPORTED_TYPES:
        raise ParseError(f"unsupported file type {file_type!r}; supported: {', '.join(SUPPORTED_TYPES)}")
    if not data:
        raise ParseError("the file is empty")
    if kind in ("txt", "md"):
        text = decode_text(data)
    elif kind in ("html", "htm"):
        text = html_to_text(decode_text(data))
    elif kind == "pdf":
        text = _pdf_text(data)
    else:
        text = _docx_text(data)
    text = normalise_text(text)
    if not text.strip():
        raise ParseError("the file contains no text")
    return text


# Tried in order after a BOM and strict UTF-8; GB18030 is a superset of GBK and GB2312.
_FALLBACK_ENCODINGS = ("gb18030", "big5")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def decode_text(data: bytes) -> str:
    """Decode UTF-8 (with or without BOM), UTF-16 with BOM, GB18030/GBK or Big5; refuse binary."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="strict")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    if _looks_binary(data):
        raise ParseError("the file looks binary, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    candidates: list[tuple[int, str]] = []
    for encoding in _FALLBACK_ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        # Big5 bytes often also decode as GB18030 (into rare characters): prefer the reading
        # with more common CJK ideographs per character.
        candidates.append((_plausibility(text), text))
    if candidates:
        return max(candidates, key=lambda item: item[0])[1]
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise ParseError("the text encoding could not be determined (expected UTF-8, GBK/GB18030 or Big5)")
    return str(best)


_COMMON_HANZI = set("的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天分还进好小部其些主样理心她本前开但因只从想实日军者意无力它与长把机十民第公此已工使情明性知全三又关点正业外将两高间由问很最重并物手应战向头文体政美相见被利什二等产或新己制身果加西斯月话合回特代内信表化老给世位次度门任常先海通教儿原东声提立及比员解水名真论处走义各入几口认条平系气题活尔更别打女变四神总何电数安少报才结反受目太量再感建务做接必场件计管期市直德资命山金指克许统区保至队形社便空决治展马科司五基眼书非则听白却界达光放强即像难且权思王象完设式色路记南品住告类求据程北边死张该交规万取拉格望觉术领共确传师观清今切院让识候带导争运笑飞风步改收根干造言联持组每济车亲极林服快办议往元英士证近失转夫令准布始怎呢存未远叫台单影具罗字爱击流备兵连调深商算质团集百需价花党华城石级整府离况亚请技际约示复病息究线似官火断精满支视消越器容照须九增研写称企八功吗包片史委乎查轻易早曾除农找装广显吧阿李标谈吃图念六引历首医局突专费号尽另周较注语仅考落青随选列武红响虽推势参希古众构房半节土投某案黑维革划敌致陈律足态护七兴派孩验责营星够章音跟志底站严巴例防族供效续施留讲型料终答紧黄绝奇察母京段依批群项故按河米围江织害斗双境客纪采举杀攻父苏密低朝友诉止细愿千值仍男钱破网热助倒育属坐帝限船脸职速刻乐否刚威毛状率甚独球般普怕弹校苦创假久错承印晚兰试股拿脑预谁益阳若哪微尼继送急血惊伤素药适波夜省初喜卫源食险待述陆习置居劳财环排福纳欢雷警获模充负云停木游龙树疑层冷洲冲射略范竟句室异激汉村哈策演简卡罪判担州静退既衣您宗积余痛检差富灵协角占配征修皮挥胜降阶审沉坚善妈刘读啊超免压银买皇养伊怀执副乱抗犯追帮宣佛岁航优怪香著田铁控税左右份穿艺背阵草脚概恶块顿敢守酒岛托央户烈洋哥索胡款靠评版宝座释景顾弟登货互付伯慢欧换闻危忙核暗姐介坏讨丽良序升监临亮露永呼味野架域沙掉括舰鱼杂误湾吉减编楚肯测败屋跑梦散温困剑渐封救贵枪缺楼县尚毫移娘朋画班智亦耳恩短掌恐遗固席松秘谢鲁遇康虑幸均销钟诗藏赶剧票损忽巨炮旧端探湖录叶春乡附吸予礼港雨呀板庭妇归睛饭额含顺输摇招婚脱补谓督毒油疗旅泽材灭逐莫笔亡鲜词圣择寻厂睡博勒烟授诺伦岸奥唐卖俄炸载洛健堂旁宫喝借君禁阴园谋宋避抓荣姑孙逃牙束跳顶玉镇雪午练迫爷篇肉嘴馆遍凡础洞卷坦牛宁纸诸训私庄祖丝翻暴森塔默握戏隐熟骨访弱蒙歌店鬼软典欲萨伙遭盘爸扩盖弄雄稳忘亿刺拥徒姆杨齐赛趣曲刀床迎冰虚玩析窗醒妻透购替塞努休虎扬途侵刑绿兄迅套贸毕唯谷轮库迹尤竞街促延震弃甲伟麻川申缓潜闪售灯针哲络抵朱埃抱鼓植纯夏忍页杰筑折郑贝尊吴秀混臣雅振染盛怒舞圆搞狂措姓残秋培迷诚宽宇猛摆梅毁伸摩盟末乃悲拍丁赵摸跃迷误败欠")  # noqa: E501 (one data line)


def _plausibility(text: str) -> float:
    hanzi = _CJK.findall(text)
    if not hanzi:
        return 0.0
    return sum(1 for ch in hanzi if ch in _COMMON_HANZI) / len(hanzi)


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


class _HtmlText(HTMLParser):
    _SKIP = {"script", "style", "noscript", "template", "head"}
    _BLOCK = {"p", "div", "br", "li", "tr", "section", "article", "table", "ul", "ol", "pre", "blockquote"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self._SKIP:
            self._skip_depth += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif re.fullmatch(r"h[1-6]", tag) or tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    lines = (line.strip() for line in "".join(parser.parts).split("\n"))
    return "\n".join(lines)


def _pdf_text(data: bytes) -> str:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ParseError("the PDF is encrypted")
        return "\n\n".join((page.extract_text() or "") for page in reader.pages)
    except ParseError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise ParseError(f"the PDF could not be read ({type(exc).__name__}: {exc})") from None


def _docx_text(data: bytes) -> str:
    try:
        import docx

        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # a zip error, a missing part, not a docx at all
        raise ParseError(f"the Word file could not be read ({type(exc).__name__})") from None
    lines: list[str] = []
    for paragraph in document.paragraphs:
        text = paragraph.text.strip()
        if not text:
            continue
        style = (paragraph.style.name or "").lower() if paragraph.style is not None else ""
        level = re.search(r"heading\s*(\d)", style) or re.search(r"标题\s*(\d)", style)
        lines.append(("#" * int(level.group(1)) + " " + text) if level else text)
    for table in document.tables:
        for row in table.rows:
            lines.append(" | ".join(cell.text.strip() for cell in row.cells))
    return "\n\n".join(lines)
