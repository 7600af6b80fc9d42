"""Short Chinese workplace articles (FAQ pages, notices, policy articles) for ingestion benchmarks.

Each article is built from a topic's own sentence pool with varied numbers, departments and
dates, so that no two share their text and their chunks spread over many topics the way a
team's exported wiki does. `article(seed)` is deterministic; about 300–650 characters, which
the default chunker (child 240 characters) cuts into two or three child chunks.
"""
from __future__ import annotations

import random

DEPARTMENTS = ["人力资源部", "财务部", "信息技术部", "行政部", "法务部", "市场部", "研发中心", "客户服务部",
               "采购部", "质量管理部", "安全生产部", "培训中心"]
CITIES = ["北京", "上海", "深圳", "杭州", "成都", "武汉", "西安", "南京", "广州", "苏州"]
KINDS = ["通知", "常见问题", "管理办法", "操作指南", "实施细则", "说明"]

TOPICS: dict[str, list[str]] = {
    "年假": ["员工入职满一年后每年享有{n}天带薪年假。", "年假需要至少提前{d}个工作日在系统中提交申请。",
           "当年未休完的年假最多可顺延{m}个月，逾期作废。", "连续休假超过{d}天的，需部门负责人和{dept}共同审批。",
           "年假可以按半天为单位申请，但不得与事假拼接。", "试用期员工暂不享受年假，转正后按比例折算。"],
    "报销": ["差旅费用应在出差结束后{n}天内提交报销。", "单笔超过{k}元的报销需要附上合同或审批单。",
           "电子发票须上传原始文件，截图不予受理。", "{dept}每月{d}日前完成上月报销的审核与付款。",
           "住宿标准为一线城市每晚不超过{k}元，其他城市按八折执行。", "出租车费用需注明起止地点和事由。"],
    "信息安全": ["办公电脑须开启屏幕锁定，离开座位超过{d}分钟自动锁屏。", "密码至少{n}位，并包含大小写字母和数字。",
             "禁止将客户数据上传到未经{dept}批准的云盘。", "发现可疑邮件请立即转发给安全邮箱，不要点击附件。",
             "外来设备接入内网前需登记并完成病毒扫描。", "离职员工的账号应在最后工作日当天停用。"],
    "考勤": ["工作日上班时间为上午{d}点至下午{n}点，中午休息一小时。", "每月迟到超过{d}次的，按事假半天处理。",
           "外勤人员可通过手机定位打卡，需备注拜访客户。", "忘记打卡的，应在{d}个工作日内提交补卡申请。",
           "弹性工作制适用于{dept}，核心工作时间为十点至十六点。", "加班需提前申报，调休在{m}个月内有效。"],
    "采购": ["采购金额超过{k}元的项目必须进行比价，至少三家供应商报价。", "办公用品每季度集中采购一次。",
           "紧急采购需{dept}负责人签字，并在{d}日内补齐手续。", "供应商准入需提交营业执照和近{m}年的业绩证明。",
           "合同签订后{d}个工作日内将扫描件归档到合同系统。", "验收不合格的物资应在{n}日内办理退换。"],
    "培训": ["新员工入职第一周参加为期{d}天的集中培训。", "每位员工每年须完成不少于{n}学时的在线课程。",
           "外部培训费用超过{k}元的，需签订服务期协议。", "培训结束后{d}日内提交学习总结。",
           "{dept}每季度发布一次培训计划，员工可自主报名。", "内部讲师授课按每学时{n}元发放课酬。"],
    "会议室": ["会议室需通过协作平台预订，单次最长{d}小时。", "预订后{n}分钟未签到的会议室将自动释放。",
            "大型会议室容纳{k}人以内，需提前{d}天预订。", "视频会议设备由{dept}统一维护，故障请报修。",
            "会议结束后请关闭投影仪和空调，并带走个人物品。", "跨城市会议优先使用视频会议，减少差旅。"],
    "IT设备": ["新员工的笔记本电脑在入职前{d}个工作日准备完毕。", "电脑使用满{m}年可申请更换。",
             "设备丢失须在{n}小时内向{dept}和行政部报告。", "显示器、键盘等外设可在内部商城领用。",
             "软件安装需使用公司软件中心，禁止安装盗版软件。", "打印机默认双面黑白打印，彩色打印需审批。"],
    "招聘": ["内部推荐成功入职并转正的，奖励推荐人{k}元。", "面试一般安排{d}轮，技术岗位增加笔试。",
           "候选人的简历和面试记录只能在招聘系统中查看。", "录用通知发出后{n}天内未确认的视为放弃。",
           "校园招聘每年九月启动，由{dept}牵头组织。", "背景调查须征得候选人书面同意。"],
    "安全生产": ["进入生产区域必须佩戴安全帽和防护眼镜。", "每月第{d}周组织一次消防演练。",
             "发现安全隐患应在{n}小时内上报{dept}。", "危险化学品实行双人双锁管理。",
             "特种作业人员须持证上岗，证书每{m}年复审一次。", "事故调查报告应在{d}日内完成。"],
    "客户服务": ["客户投诉须在{n}小时内首次响应。", "服务热线工作时间为每天八点至{d}点。",
             "退款申请审核通过后{d}个工作日内原路退回。", "重大投诉由{dept}负责人亲自跟进。",
             "客户满意度每季度调查一次，结果纳入绩效考核。", "通话录音保存{m}个月，仅供质检使用。"],
    "合同管理": ["合同金额超过{k}元的须经法务审核。", "合同模板由{dept}统一维护，每年更新一次。",
             "补充协议与主合同具有同等效力。", "合同到期前{d}天系统自动提醒续签。",
             "电子合同与纸质合同具有同等法律效力。", "涉及知识产权的条款须单独列明。"],
}

GENERAL = ["各部门应指定一名{topic}联络人，负责日常答疑和材料收集。", "相关表单可在员工门户的“{topic}”栏目下载。",
           "执行中遇到的特殊情况，由{dept}会同业务部门研究处理。", "本规定每{m}年评估一次，必要时修订。",
           "违反本规定的，视情节轻重给予提醒、通报或纪律处分。", "系统维护期间，可先提交纸质申请，事后补录。",
           "员工对处理结果有异议的，可在{d}个工作日内申请复核。", "跨部门事项以牵头部门的意见为准。"]

QUESTIONS = ["{topic}相关的申请在哪里提交？", "{topic}的规定适用于外包人员吗？", "{topic}审批一般需要多久？",
             "对{topic}的处理结果不满意怎么办？", "{topic}的材料需要保存多长时间？"]
ANSWERS = ["通过{dept}的线上系统提交，一般{d}个工作日内办结。", "适用，但外包人员须由派驻部门代为办理，并抄送{dept}。",
           "正常情况下{d}个工作日，材料不全的从补齐之日起重新计算。", "可先与{dept}沟通，仍有异议的可向监察部门反映。",
           "纸质材料保存{m}年，电子材料长期保存并定期备份。"]


def _fill(sentence: str, rng: random.Random) -> str:
    return sentence.format(n=rng.randint(3, 30), d=rng.randint(1, 9), m=rng.randint(2, 12),
                           k=rng.choice([500, 1000, 2000, 5000, 10000, 50000]), dept=rng.choice(DEPARTMENTS),
                           topic="{topic}")


def article(seed: int) -> tuple[str, str]:
    """(title, text) of one article; the same seed gives the same article."""
    rng = random.Random(seed)
    topic = rng.choice(sorted(TOPICS))
    city, dept, kind = rng.choice(CITIES), rng.choice(DEPARTMENTS), rng.choice(KINDS)
    title = f"{city}分公司{topic}{kind}（{2020 + seed % 7}年第{seed % 97 + 1}号）"
    # The topic's sentences in a random order, then general ones: no sentence twice in one article.
    pool_all = TOPICS[topic] + GENERAL
    pool = rng.sample(TOPICS[topic], k=len(TOPICS[topic])) + rng.sample(GENERAL, k=len(GENERAL))
    paragraphs = [f"为规范{city}分公司的{topic}工作，{dept}根据集团相关制度制定本{kind}，自发布之日起执行。"]
    target = rng.randint(330, 620)
    while sum(map(len, paragraphs)) < target and pool:
        take = rng.randint(2, 3)
        paragraphs.append("".join(_fill(s, rng).replace("{topic}", topic) for s in pool[:take]))
        del pool[:take]
    for i in rng.sample(range(len(QUESTIONS)), k=rng.choice([0, 1, 2, 2])):
        extra = "".join(_fill(s, rng) for s in rng.sample(pool_all, k=2))
        paragraphs.append(f"问：{QUESTIONS[i]}答：{_fill(ANSWERS[i], rng)}另外，{extra}".replace("{topic}", topic))
    paragraphs.append(f"本{kind}由{dept}负责解释，如有疑问请联系分机{rng.randint(1000, 9999)}。")
    return title, "\n\n".join(paragraphs)
