from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('answers', '0001_conversations_turns_events_citations'),
    ]

    operations = [
        migrations.AlterField(
            model_name='turn',
            name='action',
            field=models.CharField(blank=True, choices=[('answer', 'answer'), ('hybrid', 'hybrid'), ('clarify', 'clarify'), ('search', 'search'), ('chat', 'chat')], max_length=16),
        ),
        migrations.AlterField(
            model_name='turn',
            name='intent',
            field=models.CharField(blank=True, choices=[('factual_question', 'factual_question'), ('search', 'search'), ('comparison', 'comparison'), ('procedural', 'procedural'), ('conversational', 'conversational')], max_length=32),
        ),
        migrations.AddConstraint(
            model_name='turn',
            constraint=models.CheckConstraint(condition=models.Q(('intent__in', ['', 'factual_question', 'search', 'comparison', 'procedural', 'conversational'])), name='answers_turn_intent_known'),
        ),
        migrations.AddConstraint(
            model_name='turn',
            constraint=models.CheckConstraint(condition=models.Q(('action__in', ['', 'answer', 'hybrid', 'clarify', 'search', 'chat'])), name='answers_turn_action_known'),
        ),
    ]
