from django.db import migrations

# A starter list for the demo corpus; admins edit or replace it in the admin.
STARTER = [
    ("Setup and installation", "Installing, starting and upgrading the platform; the database, Redis and the first admin account."),
    ("Asking questions", "How to ask questions in the chat, conversations, follow-up questions and streaming answers."),
    ("Citations and confidence", "Inline citations, sources, how answers are grounded, confidence badges and refusals."),
    ("Search", "Finding documents, ranked search results, snippets, filters and hybrid search."),
    ("Document ingestion", "Uploading and ingesting files, supported formats, processing status and failures."),
    ("Administration and audit", "The admin site, auditing answers, turns, citations, users and permissions."),
    ("Analytics", "Dashboards, categories, conversation titles, evaluation and quality figures."),
    ("Configuration and providers", "Settings, environment variables, embedding and chat models, OpenAI-compatible endpoints."),
    ("Troubleshooting", "Errors, things that do not work, slow responses, failed documents and how to fix them."),
]


def seed(apps, schema_editor):
    Category = apps.get_model("analytics", "Category")
    for name, description in STARTER:
        Category.objects.get_or_create(name=name, defaults={"description": description})


def unseed(apps, schema_editor):
    apps.get_model("analytics", "Category").objects.filter(name__in=[n for n, _ in STARTER]).delete()


class Migration(migrations.Migration):
    dependencies = [("analytics", "0001_categories_labelled_queries_evaluations")]
    operations = [migrations.RunPython(seed, unseed)]
