"""The words the entity rules know: tools by name, words that are never a name, group words, makers.
Kept apart from the rules so each stays readable (and under the module size limit)."""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


KNOWN_TOOLS = words(
    """
    git github gitlab bitbucket docker podman kubernetes k8s helm terraform ansible pulumi postgres
    postgresql mysql mariadb sqlite redis kafka rabbitmq nginx caddy python javascript typescript
    nodejs deno bun react vue svelte angular django flask fastapi rails golang rust java kotlin scala
    swift ruby php elixir haskell vim neovim emacs vscode jetbrains pycharm intellij xcode slack jira
    confluence notion linear figma aws gcp azure argo argocd grafana prometheus datadog sentry jenkins
    circleci buildkite pytest npm yarn pnpm pip poetry ruff eslint prettier webpack vite tmux zsh bash
    fish homebrew chrome firefox safari postman claude codex copilot chatgpt tantivy onnx onnxruntime
    numpy pandas pytorch tensorflow celery elasticsearch opensearch mongodb graphql grpc airflow dbt
    snowflake bigquery spark hadoop cloudflare vercel netlify heroku supabase firebase stripe twilio
    openai anthropic ollama llama huggingface jupyter zoom teams discord
    """
)
NEVER_NAMES = words(
    """
    i we you he she they it me us him her them my our your his their its this that these those there
    here the a an and or but if then so yes no not all any some every each both either neither none
    monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight january
    february march april may june july august september october november december also just only maybe
    please thanks thank hello hi hey okay ok sure great good nice well what when where why how who
    which whose user assistant someone everyone anyone nobody people everybody new old next last
    first second final main default customers users everything nothing something
    meanwhile anyway anyways however later afterwards afterward eventually finally still otherwise
    besides instead luckily unfortunately fortunately apparently honestly actually basically hopefully
    sadly suddenly recently currently initially overall again moreover furthermore therefore thus hence
    indeed perhaps now soon once since while after before during until though although because unless
    glad happy sorry excited thrilled proud lucky grateful thankful awesome amazing cool wow congrats
    congratulations
    """
)
"""Words that are never a name, and are dropped from the front of one ("Meanwhile Bob" is Bob):
pronouns, determiners, days, months, and the words that open a sentence."""
GROUP_WORDS = words(
    """
    team teams staff company management leadership product engineering support sales legal design
    marketing security ops devops infra customer finance accounting operations research recruiting
    hiring procurement partnerships success board committee council department dept division group
    squad guild office review meeting standup retro retrospective sync kickoff offsite workshop
    """
)
"""Words of departments, teams and meetings: a capitalised phrase holding one ("Design Review",
"Customer Success", "Finance") names a group or an event, never a person."""
GENERIC = words(
    """
    git code local remote public private same whole entire shared internal upstream fork forked main
    big small separate single other another one two
    """
)
VENDORS = words(
    """
    apache google microsoft amazon atlassian jetbrains oracle ibm adobe apple hashicorp elastic mozilla
    """
)
"""Makers whose name goes before a known tool's ("Apache Kafka", "Google Chrome"): still the tool."""
COMMON_FIRST_NAMES = words(
    """
    aaron adam alan albert alex alice amanda amy andrew andy angela ann anna anne anthony ben benjamin beth
    bill bob brian bruce carl carol caroline catherine charles charlie chris christine claire dan daniel
    dave david deborah dennis diana donna dorothy ed edward elizabeth ellen emily emma eric frank gary george
    grace greg harry helen henry jack jake james jane janet jason jean jeff jennifer jenny jerry jessica jim
    joan joe john jon jonathan joseph josh julia julie karen kate katie keith kelly ken kevin laura lily
    linda lisa liz lucy mark martha mary matt matthew megan melanie michael michelle mike nancy nate nick
    olivia pam pat patricia paul peter phil rachel ray rebecca richard rob robert ron rose ruth ryan sam
    samantha sarah scott sean sophie steve steven sue susan thomas tim tom tony victoria will william
    """
)
"""Common first names: a plain capitalised word that is one is a person's name where only a tool cue
("switched to Tom", "deployed the app with Ben") would type it, unless it is a known tool's."""
